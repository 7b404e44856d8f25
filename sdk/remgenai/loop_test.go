package remgenai_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"google.golang.org/genai"

	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remgenai"
)

func fake(t *testing.T) (*genai.Client, *fakellm.Recorder) {
	rec := &fakellm.Recorder{}
	srv := httptest.NewServer(fakellm.Gemini(rec))
	t.Cleanup(srv.Close)
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	return client, rec
}

func config(system *genai.Content) *genai.GenerateContentConfig {
	c := configNoThoughts(system)
	c.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: true}
	return c
}

// configNoThoughts asks for no thoughts: Gemini's calls come unsigned.
func configNoThoughts(system *genai.Content) *genai.GenerateContentConfig {
	decl := func(name string) *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{Name: name, ParametersJsonSchema: map[string]any{"type": "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}}}}
	}
	return &genai.GenerateContentConfig{SystemInstruction: system,
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl("get_weather"), decl("fetch_guide"), remgenai.LookupDeclaration()}}}}
}

// memory is the agent on genai with thoughts, the history as the SDK's
// own []*genai.Content: the candidate's content appended as it came, less
// its unsigned thought summaries (display text; a history keeps a thought
// only with its signature, package visible).
func memory(client *genai.Client, config func(*genai.Content) *genai.GenerateContentConfig, prefix ...*genai.Content) agenttest.Memory {
	return func(ctx context.Context) error {
		system := genai.NewContentFromText(agenttest.System, genai.RoleUser)
		contents := append([]*genai.Content(nil), prefix...)
		for _, prompt := range fakellm.Prompts {
			contents = append(contents, genai.NewContentFromText(prompt, genai.RoleUser))
			for {
				resp, err := client.Models.GenerateContent(ctx, "gemini-test", contents, config(system))
				if err != nil {
					return err
				}
				content := *resp.Candidates[0].Content
				content.Parts = slices.DeleteFunc(slices.Clone(content.Parts), func(p *genai.Part) bool { return p.Thought && len(p.ThoughtSignature) == 0 })
				contents = append(contents, &content)
				var parts []*genai.Part
				for _, c := range resp.FunctionCalls() {
					args, _ := jsonText(c.Args)
					parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: c.ID, Name: c.Name,
						Response: map[string]any{"output": agenttest.Tool(c.Name, args)}}})
				}
				if len(parts) == 0 {
					break
				}
				contents = append(contents, genai.NewContentFromParts(parts, genai.RoleUser))
			}
		}
		return nil
	}
}

func ask(client *genai.Client, config func(*genai.Content) *genai.GenerateContentConfig) sdk.Asker {
	return remgenai.Ask(client, "gemini-test", config(nil), remgenai.Options{System: agenttest.System})
}

// tool answers as the memory loop does: {"output": text}.
func tool(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
	return remgenai.ToolResult(c, map[string]any{"output": agenttest.Tool(c.Name, c.Arguments)})
}

func TestLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, memory(client, config), ask(client, config), tool)
}

// Without thoughts Gemini signs no call: its calls go back unsigned, as the
// in-memory agent sends them, never with the skip value.
func TestLoopWithoutThoughts(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, memory(client, configNoThoughts), ask(client, configNoThoughts), tool)
}

// After a pydantic-ai turn, the Go loop sends what a genai agent that held
// that turn in memory as pydantic-ai sends it would send: the first call,
// not Gemini's, with the skip signature; the text result as
// {"return_value": text}, the object as it is.
func TestLoopAfterPydanticAI(t *testing.T) {
	client, rec := fake(t)
	var guide map[string]any
	if err := json.Unmarshal([]byte(agenttest.PyGuide), &guide); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"city": "Porto"}
	prefix := []*genai.Content{genai.NewContentFromText(agenttest.PyPrompt, genai.RoleUser),
		genai.NewContentFromParts([]*genai.Part{
			{FunctionCall: &genai.FunctionCall{ID: "py_1", Name: "get_weather", Args: args}, ThoughtSignature: []byte(fakellm.SkipSignature)},
			{FunctionCall: &genai.FunctionCall{ID: "py_2", Name: "fetch_guide", Args: args}}}, genai.RoleModel),
		genai.NewContentFromParts([]*genai.Part{
			{FunctionResponse: &genai.FunctionResponse{ID: "py_1", Name: "get_weather", Response: map[string]any{"return_value": agenttest.PyWeather}}},
			{FunctionResponse: &genai.FunctionResponse{ID: "py_2", Name: "fetch_guide", Response: guide}}}, genai.RoleUser),
		genai.NewContentFromText(agenttest.PyAnswer, genai.RoleModel)}
	agenttest.CheckAfter(t, rec, memory(client, config, prefix...), ask(client, config), tool)
}

// A streamed answer's chunks are stored as the same message as the
// unstreamed answer: the thought, the text joined, the calls and their
// signatures, model and usage.
func TestStream(t *testing.T) {
	client, rec := fake(t)
	o := remgenai.Options{System: agenttest.System}
	agenttest.CheckStream(t, rec, remgenai.Ask(client, "gemini-test", config(nil), o), remgenai.AskStream(client, "gemini-test", config(nil), o, nil))
}

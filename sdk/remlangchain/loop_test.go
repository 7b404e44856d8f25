package remlangchain_test

import (
	"context"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remlangchain"
)

func fake(t *testing.T) (llms.Model, *fakellm.Recorder) {
	rec := &fakellm.Recorder{}
	srv := httptest.NewServer(fakellm.OpenAI(rec))
	t.Cleanup(srv.Close)
	llm, err := openai.New(openai.WithBaseURL(srv.URL), openai.WithToken("test"), openai.WithModel("gpt-test"))
	if err != nil {
		t.Fatal(err)
	}
	return llm, rec
}

func tools() []llms.Tool {
	fn := func(name string) llms.Tool {
		return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: name,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	}
	return []llms.Tool{fn("get_weather"), fn("fetch_guide"), remlangchain.LookupTool()}
}

// memory is the agent on llms.Model.GenerateContent with the history as
// its own []llms.MessageContent.
func memory(llm llms.Model, prefix ...llms.MessageContent) agenttest.Memory {
	return func(ctx context.Context) error {
		msgs := append([]llms.MessageContent{llms.TextParts(llms.ChatMessageTypeSystem, agenttest.System)}, prefix...)
		for _, prompt := range fakellm.Prompts {
			msgs = append(msgs, llms.TextParts(llms.ChatMessageTypeHuman, prompt))
			for {
				resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(tools()))
				if err != nil {
					return err
				}
				choice := resp.Choices[0]
				ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
				if choice.Content != "" {
					ai.Parts = append(ai.Parts, llms.TextContent{Text: choice.Content})
				}
				for _, tc := range choice.ToolCalls {
					ai.Parts = append(ai.Parts, tc)
				}
				msgs = append(msgs, ai)
				for _, tc := range choice.ToolCalls {
					msgs = append(msgs, llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{
						ToolCallID: tc.ID, Name: tc.FunctionCall.Name, Content: agenttest.Tool(tc.FunctionCall.Name, tc.FunctionCall.Arguments)}}})
				}
				if len(choice.ToolCalls) == 0 {
					break
				}
			}
		}
		return nil
	}
}

func ask(llm llms.Model) sdk.Asker {
	return remlangchain.Ask(llm, remlangchain.Options{System: agenttest.System}, llms.WithTools(tools()))
}

func TestLoop(t *testing.T) {
	llm, rec := fake(t)
	agenttest.Check(t, rec, memory(llm), ask(llm), nil)
}

// After a pydantic-ai turn, the Go loop sends what a langchaingo agent that
// held that turn in memory as pydantic-ai sends it would send.
func TestLoopAfterPydanticAI(t *testing.T) {
	llm, rec := fake(t)
	call := func(id, name string) llms.ToolCall {
		return llms.ToolCall{ID: id, Type: "function", FunctionCall: &llms.FunctionCall{Name: name, Arguments: agenttest.PyWeatherArg}}
	}
	result := func(id, name, text string) llms.MessageContent {
		return llms.MessageContent{Role: llms.ChatMessageTypeTool, Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: id, Name: name, Content: text}}}
	}
	prefix := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, agenttest.PyPrompt),
		{Role: llms.ChatMessageTypeAI, Parts: []llms.ContentPart{call("py_1", "get_weather"), call("py_2", "fetch_guide")}},
		result("py_1", "get_weather", agenttest.PyWeather), result("py_2", "fetch_guide", agenttest.PyGuide),
		llms.TextParts(llms.ChatMessageTypeAI, agenttest.PyAnswer)}
	agenttest.CheckAfter(t, rec, memory(llm, prefix...), ask(llm), nil)
}

// The chat message history gives back what was added, tool calls and all,
// and refuses a tool result whose call it never stored.
func TestHistory(t *testing.T) {
	ctx := context.Background()
	for _, b := range agenttest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			h := remlangchain.NewHistory(b.New(t, agenttest.Large), "lc-1")
			in := []llms.ChatMessage{
				llms.SystemChatMessage{Content: "Be brief."},
				llms.HumanChatMessage{Content: "weather?"},
				llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function", FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city": "Lisbon"}`}}}},
				llms.ToolChatMessage{ID: "c1", Content: `{"celsius":21}`},
				llms.AIChatMessage{Content: "21 °C."},
			}
			for _, m := range in {
				if err := h.AddMessage(ctx, m); err != nil {
					t.Fatal(err)
				}
			}
			got, err := h.Messages(ctx)
			if err != nil || !reflect.DeepEqual(got, in) {
				t.Fatalf("messages\n%#v\nwant\n%#v\n%v", got, in, err)
			}
			// A fresh History learns the call's name from the session.
			again := remlangchain.NewHistory(b.New(t, agenttest.Large), "lc-2")
			if err := again.SetMessages(ctx, in[:3]); err != nil {
				t.Fatal(err)
			}
			if err := remlangchain.NewHistory(remlangchain.StoreOf(again), "lc-2").AddMessage(ctx, in[3]); err != nil {
				t.Fatal(err)
			}
			err = h.AddMessage(ctx, llms.ToolChatMessage{ID: "nope", Content: "x"})
			if fe, ok := models.AsFieldError(err); !ok || fe.Field != "tool_call_id" {
				t.Fatalf("orphan tool result: %v", err)
			}
			if err := h.Clear(ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := h.Messages(ctx); len(got) != 0 {
				t.Fatalf("after Clear: %v", got)
			}
		})
	}
}

// With llms.WithStreamingFunc the answer is streamed; the choice
// langchaingo puts together is stored as the same message as the answer not
// streamed.
func TestStream(t *testing.T) {
	llm, rec := fake(t)
	var pieces int
	stream := remlangchain.Ask(llm, remlangchain.Options{System: agenttest.System}, llms.WithTools(tools()),
		llms.WithStreamingFunc(func(context.Context, []byte) error { pieces++; return nil }))
	agenttest.CheckStream(t, rec, ask(llm), stream)
	if pieces == 0 {
		t.Fatal("nothing was streamed")
	}
}

package remgenai_test

import (
	"context"
	"net/http/httptest"
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
	decl := func(name string) *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{Name: name, ParametersJsonSchema: map[string]any{"type": "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}}}}
	}
	return &genai.GenerateContentConfig{SystemInstruction: system, ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true},
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl("get_weather"), decl("fetch_guide"), remgenai.LookupDeclaration()}}}}
}

// loop is the agent on genai with thoughts: the history as the SDK's own
// []*genai.Content (the candidate's content appended as it came), or in
// remstore.
func loop(client *genai.Client) agenttest.Loop {
	return func(ctx context.Context, st sdk.Store) error {
		system := genai.NewContentFromText(agenttest.System, genai.RoleUser)
		var contents []*genai.Content
		for _, prompt := range fakellm.Prompts {
			if st == nil {
				contents = append(contents, genai.NewContentFromText(prompt, genai.RoleUser))
			} else if err := st.Append(ctx, agenttest.Session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
				return err
			}
			for {
				if st != nil {
					h, err := st.Load(ctx, agenttest.Session)
					if err != nil {
						return err
					}
					if system, contents, err = remgenai.Contents(h, remgenai.Options{System: agenttest.System}); err != nil {
						return err
					}
				}
				resp, err := client.Models.GenerateContent(ctx, "gemini-test", contents, config(system))
				if err != nil {
					return err
				}
				calls := resp.FunctionCalls()
				if st == nil {
					contents = append(contents, resp.Candidates[0].Content)
					var parts []*genai.Part
					for _, c := range calls {
						args, _ := jsonText(c.Args)
						out, _ := agenttest.Tool(ctx, nil, c.Name, args)
						parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: c.ID, Name: c.Name, Response: map[string]any{"output": out}}})
					}
					if len(parts) > 0 {
						contents = append(contents, genai.NewContentFromParts(parts, genai.RoleUser))
					}
				} else {
					answer, err := remgenai.FromResponse(resp)
					if err != nil {
						return err
					}
					turn := []models.HistoryMessage{answer}
					for _, c := range answer.ToolCalls {
						out, err := agenttest.Tool(ctx, st, c.Name, c.Arguments)
						if err != nil {
							return err
						}
						m, err := remgenai.ToolResult(c, map[string]any{"output": out})
						if err != nil {
							return err
						}
						turn = append(turn, m)
					}
					if err := st.Append(ctx, agenttest.Session, turn); err != nil {
						return err
					}
				}
				if len(calls) == 0 {
					break
				}
			}
		}
		return nil
	}
}

func TestLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, loop(client))
}

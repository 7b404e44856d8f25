package remanthropic_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remanthropic"
)

func fake(t *testing.T) (anthropic.Client, *fakellm.Recorder) {
	rec := &fakellm.Recorder{}
	srv := httptest.NewServer(fakellm.Anthropic(rec))
	t.Cleanup(srv.Close)
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0)), rec
}

func tools() []anthropic.ToolUnionParam {
	fn := func(name string) anthropic.ToolUnionParam {
		return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: name,
			InputSchema: anthropic.ToolInputSchemaParam{Properties: map[string]any{"city": map[string]any{"type": "string"}}}}}
	}
	return []anthropic.ToolUnionParam{fn("get_weather"), fn("fetch_guide"), remanthropic.LookupTool()}
}

// loop is the agent on the Messages API with extended thinking: the
// history in the SDK's own message list (resp.ToParam(), tool_result
// blocks), or in remstore.
func loop(client anthropic.Client) agenttest.Loop {
	return func(ctx context.Context, st sdk.Store) error {
		system := []anthropic.TextBlockParam{{Text: agenttest.System}}
		var msgs []anthropic.MessageParam
		for _, prompt := range fakellm.Prompts {
			if st == nil {
				msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(prompt)))
			} else if err := st.Append(ctx, agenttest.Session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
				return err
			}
			for {
				if st != nil {
					h, err := st.Load(ctx, agenttest.Session)
					if err != nil {
						return err
					}
					if system, msgs, err = remanthropic.Messages(h, remanthropic.Options{System: agenttest.System}); err != nil {
						return err
					}
				}
				resp, err := client.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
					Thinking: anthropic.ThinkingConfigParamOfEnabled(1024), System: system, Messages: msgs, Tools: tools()})
				if err != nil {
					return err
				}
				called := false
				if st == nil {
					msgs = append(msgs, resp.ToParam())
					var results []anthropic.ContentBlockParamUnion
					for _, b := range resp.Content {
						if b.Type == "tool_use" {
							out, _ := agenttest.Tool(ctx, nil, b.Name, string(b.Input))
							results = append(results, anthropic.NewToolResultBlock(b.ID, out, false))
						}
					}
					if called = len(results) > 0; called {
						msgs = append(msgs, anthropic.NewUserMessage(results...))
					}
				} else {
					answer, err := remanthropic.FromMessage(resp)
					if err != nil {
						return err
					}
					turn := []models.HistoryMessage{answer}
					for _, c := range answer.ToolCalls {
						out, err := agenttest.Tool(ctx, st, c.Name, c.Arguments)
						if err != nil {
							return err
						}
						turn = append(turn, sdk.ToolResult(c, out))
					}
					if err := st.Append(ctx, agenttest.Session, turn); err != nil {
						return err
					}
					called = len(answer.ToolCalls) > 0
				}
				if !called {
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

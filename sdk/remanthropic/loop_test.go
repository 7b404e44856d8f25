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

// memory is the agent on the Messages API with extended thinking, the
// history in the SDK's own message list (resp.ToParam(), tool_result blocks).
func memory(client anthropic.Client) agenttest.Memory {
	return func(ctx context.Context) error {
		system := []anthropic.TextBlockParam{{Text: agenttest.System}}
		var msgs []anthropic.MessageParam
		for _, prompt := range fakellm.Prompts {
			msgs = append(msgs, anthropic.NewUserMessage(anthropic.NewTextBlock(prompt)))
			for {
				resp, err := client.Messages.New(ctx, params(system, msgs))
				if err != nil {
					return err
				}
				msgs = append(msgs, resp.ToParam())
				var results []anthropic.ContentBlockParamUnion
				for _, b := range resp.Content {
					if b.Type == "tool_use" {
						results = append(results, anthropic.NewToolResultBlock(b.ID, agenttest.Tool(b.Name, string(b.Input)), false))
					}
				}
				if len(results) == 0 {
					break
				}
				msgs = append(msgs, anthropic.NewUserMessage(results...))
			}
		}
		return nil
	}
}

func params(system []anthropic.TextBlockParam, msgs []anthropic.MessageParam) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024), System: system, Messages: msgs, Tools: tools()}
}

func ask(client anthropic.Client) sdk.Asker {
	return func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
		system, msgs, err := remanthropic.Messages(h, remanthropic.Options{System: agenttest.System})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Messages.New(ctx, params(system, msgs))
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return remanthropic.FromMessage(resp)
	}
}

func TestLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, memory(client), ask(client), nil)
}

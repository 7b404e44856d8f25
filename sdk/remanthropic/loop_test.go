package remanthropic_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/fakellm"
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
func memory(client anthropic.Client, params func([]anthropic.TextBlockParam, []anthropic.MessageParam) anthropic.MessageNewParams, prefix ...anthropic.MessageParam) agenttest.Memory {
	return func(ctx context.Context) error {
		system := []anthropic.TextBlockParam{{Text: agenttest.System}}
		msgs := append([]anthropic.MessageParam(nil), prefix...)
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

// plain is params without thinking.
func plain(system []anthropic.TextBlockParam, msgs []anthropic.MessageParam) anthropic.MessageNewParams {
	p := params(system, msgs)
	p.Thinking = anthropic.ThinkingConfigParamUnion{}
	return p
}

func ask(client anthropic.Client, params func([]anthropic.TextBlockParam, []anthropic.MessageParam) anthropic.MessageNewParams) sdk.Asker {
	return remanthropic.Ask(&client, params(nil, nil), remanthropic.Options{System: agenttest.System})
}

func TestLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, memory(client, params), ask(client, params), nil)
}

// After a pydantic-ai turn, the Go loop sends what an anthropic-sdk-go
// agent that held that turn in memory as pydantic-ai sends it would send
// (without thinking: the turn pydantic-ai stored has no thinking block).
func TestLoopAfterPydanticAI(t *testing.T) {
	client, rec := fake(t)
	prefix := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(agenttest.PyPrompt)),
		anthropic.NewAssistantMessage(anthropic.NewToolUseBlock("py_1", json.RawMessage(agenttest.PyWeatherArg), "get_weather"),
			anthropic.NewToolUseBlock("py_2", json.RawMessage(agenttest.PyWeatherArg), "fetch_guide")),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock("py_1", agenttest.PyWeather, false), anthropic.NewToolResultBlock("py_2", agenttest.PyGuide, false)),
		anthropic.NewAssistantMessage(anthropic.NewTextBlock(agenttest.PyAnswer))}
	agenttest.CheckAfter(t, rec, memory(client, plain, prefix...), ask(client, plain), nil)
}

// A streamed answer, accumulated (Message.Accumulate), is stored as the same
// message as the unstreamed one: thinking and its signature, text, calls,
// model and usage.
func TestStream(t *testing.T) {
	client, rec := fake(t)
	p := params(nil, nil)
	o := remanthropic.Options{System: agenttest.System}
	agenttest.CheckStream(t, rec, remanthropic.Ask(&client, p, o), remanthropic.AskStream(&client, p, o, nil))
}

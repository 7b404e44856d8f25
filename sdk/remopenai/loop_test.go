package remopenai_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remopenai"
)

func fake(t *testing.T) (openai.Client, *fakellm.Recorder) {
	rec := &fakellm.Recorder{}
	srv := httptest.NewServer(fakellm.OpenAI(rec))
	t.Cleanup(srv.Close)
	return openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0)), rec
}

func chatTools() []openai.ChatCompletionToolUnionParam {
	fn := func(name string) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: name,
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})
	}
	return []openai.ChatCompletionToolUnionParam{fn("get_weather"), fn("fetch_guide"), remopenai.LookupTool()}
}

// chatMemory is the agent on Chat Completions with the SDK's own message
// list: msg.ToParam() and openai.ToolMessage, as openai-go's users write it.
func chatMemory(client openai.Client) agenttest.Memory {
	return func(ctx context.Context) error {
		params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools(),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(agenttest.System)}}
		for _, prompt := range fakellm.Prompts {
			params.Messages = append(params.Messages, openai.UserMessage(prompt))
			for {
				resp, err := client.Chat.Completions.New(ctx, params)
				if err != nil {
					return err
				}
				msg := resp.Choices[0].Message
				params.Messages = append(params.Messages, msg.ToParam())
				for _, tc := range msg.ToolCalls {
					params.Messages = append(params.Messages, openai.ToolMessage(agenttest.Tool(tc.Function.Name, tc.Function.Arguments), tc.ID))
				}
				if len(msg.ToolCalls) == 0 {
					break
				}
			}
		}
		return nil
	}
}

// chatAsk is the same model call with the history in remstore.
func chatAsk(client openai.Client) sdk.Asker {
	return func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
		msgs, err := remopenai.Messages(h, remopenai.Options{System: agenttest.System})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools(), Messages: msgs})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return remopenai.FromCompletion(resp)
	}
}

func TestChatLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, chatMemory(client), chatAsk(client), nil)
}

func responsesTools() []responses.ToolUnionParam {
	fn := func(name string) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: name, Strict: openai.Bool(false),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	}
	return []responses.ToolUnionParam{fn("get_weather"), fn("fetch_guide"), remopenai.ResponsesLookupTool()}
}

// responsesMemory is the agent on the Responses API, its items kept by
// hand in memory (reasoning items by id and encrypted content, their
// summary text left out as a history leaves it out, package visible; text,
// function calls and their outputs).
func responsesMemory(client openai.Client) agenttest.Memory {
	return func(ctx context.Context) error {
		input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(agenttest.System, responses.EasyInputMessageRoleSystem)}
		for _, prompt := range fakellm.Prompts {
			input = append(input, responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleUser))
			for {
				resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", Tools: responsesTools(),
					Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
				if err != nil {
					return err
				}
				var calls []responses.ResponseFunctionToolCall
				var text string
				for _, it := range resp.Output {
					switch it.Type {
					case "reasoning":
						rs := it.AsReasoning()
						r := responses.ResponseReasoningItemParam{ID: rs.ID, Summary: []responses.ResponseReasoningItemSummaryParam{},
							EncryptedContent: openai.String(rs.EncryptedContent)}
						input = append(input, responses.ResponseInputItemUnionParam{OfReasoning: &r})
					case "message":
						for _, c := range it.Content {
							text += c.Text
						}
					case "function_call":
						calls = append(calls, it.AsFunctionCall())
					}
				}
				if text != "" {
					input = append(input, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
				}
				for _, c := range calls {
					input = append(input, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.CallID, c.Name))
				}
				for _, c := range calls {
					input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
						CallID: openai.String(c.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(agenttest.Tool(c.Name, c.Arguments))}}})
				}
				if len(calls) == 0 {
					break
				}
			}
		}
		return nil
	}
}

func responsesAsk(client openai.Client) sdk.Asker {
	return func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
		input, err := remopenai.InputItems(h, remopenai.Options{System: agenttest.System})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", Tools: responsesTools(),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return remopenai.FromResponse(resp)
	}
}

func TestResponsesLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, responsesMemory(client), responsesAsk(client), nil)
}

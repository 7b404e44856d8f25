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

// chatLoop is the agent on Chat Completions: the history in the SDK's own
// message list (store nil), or in remstore, loaded before each call and
// stored after it.
func chatLoop(client openai.Client) agenttest.Loop {
	return func(ctx context.Context, st sdk.Store) error {
		params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools(),
			Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(agenttest.System)}}
		for _, prompt := range fakellm.Prompts {
			if st == nil {
				params.Messages = append(params.Messages, openai.UserMessage(prompt))
			} else if err := st.Append(ctx, agenttest.Session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
				return err
			}
			for {
				if st != nil {
					h, err := st.Load(ctx, agenttest.Session)
					if err != nil {
						return err
					}
					if params.Messages, err = remopenai.Messages(h, remopenai.Options{System: agenttest.System}); err != nil {
						return err
					}
				}
				resp, err := client.Chat.Completions.New(ctx, params)
				if err != nil {
					return err
				}
				msg := resp.Choices[0].Message
				if st == nil {
					params.Messages = append(params.Messages, msg.ToParam())
					for _, tc := range msg.ToolCalls {
						out, _ := agenttest.Tool(ctx, nil, tc.Function.Name, tc.Function.Arguments)
						params.Messages = append(params.Messages, openai.ToolMessage(out, tc.ID))
					}
				} else {
					answer, err := remopenai.FromCompletion(resp)
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
				}
				if len(msg.ToolCalls) == 0 {
					break
				}
			}
		}
		return nil
	}
}

func TestChatLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, chatLoop(client))
}

func responsesTools() []responses.ToolUnionParam {
	fn := func(name string) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{Name: name, Strict: openai.Bool(false),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}
	}
	return []responses.ToolUnionParam{fn("get_weather"), fn("fetch_guide"), remopenai.ResponsesLookupTool()}
}

// responsesLoop is the agent on the Responses API, its items kept by hand
// in memory (reasoning items as they came, function calls, outputs).
func responsesLoop(client openai.Client) agenttest.Loop {
	return func(ctx context.Context, st sdk.Store) error {
		input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(agenttest.System, responses.EasyInputMessageRoleSystem)}
		for _, prompt := range fakellm.Prompts {
			if st == nil {
				input = append(input, responses.ResponseInputItemParamOfMessage(prompt, responses.EasyInputMessageRoleUser))
			} else if err := st.Append(ctx, agenttest.Session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
				return err
			}
			for {
				if st != nil {
					h, err := st.Load(ctx, agenttest.Session)
					if err != nil {
						return err
					}
					if input, err = remopenai.InputItems(h, remopenai.Options{System: agenttest.System}); err != nil {
						return err
					}
				}
				resp, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-test", Tools: responsesTools(),
					Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}})
				if err != nil {
					return err
				}
				var calls []responses.ResponseFunctionToolCall
				if st == nil {
					var text string
					for _, it := range resp.Output {
						switch it.Type {
						case "reasoning":
							r := it.AsReasoning().ToParam()
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
						out, _ := agenttest.Tool(ctx, nil, c.Name, c.Arguments)
						input = append(input, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
							CallID: openai.String(c.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(out)}}})
					}
				} else {
					answer, err := remopenai.FromResponse(resp)
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
						calls = append(calls, responses.ResponseFunctionToolCall{})
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

func TestResponsesLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, responsesLoop(client))
}

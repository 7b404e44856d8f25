package remopenai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
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
func chatMemory(client openai.Client, prefix ...openai.ChatCompletionMessageParamUnion) agenttest.Memory {
	return func(ctx context.Context) error {
		params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools(),
			Messages: append([]openai.ChatCompletionMessageParamUnion{openai.SystemMessage(agenttest.System)}, prefix...)}
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
	return remopenai.Ask(&client, openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools()}, remopenai.Options{System: agenttest.System})
}

func TestChatLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, chatMemory(client), chatAsk(client), nil)
}

// After a pydantic-ai turn, the Go loop sends what an openai-go agent that
// held that turn in memory as pydantic-ai sends it would send.
func TestChatLoopAfterPydanticAI(t *testing.T) {
	client, rec := fake(t)
	a := openai.ChatCompletionAssistantMessageParam{ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{
		{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "py_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: agenttest.PyWeatherArg}}},
		{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: "py_2", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "fetch_guide", Arguments: agenttest.PyWeatherArg}}}}}
	prefix := []openai.ChatCompletionMessageParamUnion{openai.UserMessage(agenttest.PyPrompt), {OfAssistant: &a},
		openai.ToolMessage(agenttest.PyWeather, "py_1"), openai.ToolMessage(agenttest.PyGuide, "py_2"), openai.AssistantMessage(agenttest.PyAnswer)}
	agenttest.CheckAfter(t, rec, chatMemory(client, prefix...), chatAsk(client), nil)
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
func responsesMemory(client openai.Client, prefix ...responses.ResponseInputItemUnionParam) agenttest.Memory {
	return func(ctx context.Context) error {
		input := append(responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(agenttest.System, responses.EasyInputMessageRoleSystem)}, prefix...)
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
	return remopenai.AskResponses(&client, responses.ResponseNewParams{Model: "gpt-test", Tools: responsesTools()}, remopenai.Options{System: agenttest.System})
}

func TestResponsesLoop(t *testing.T) {
	client, rec := fake(t)
	agenttest.Check(t, rec, responsesMemory(client), responsesAsk(client), nil)
}

func TestResponsesLoopAfterPydanticAI(t *testing.T) {
	client, rec := fake(t)
	output := func(id, text string) responses.ResponseInputItemUnionParam {
		return responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openai.String(id), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(text)}}}
	}
	prefix := []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(agenttest.PyPrompt, responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(agenttest.PyWeatherArg, "py_1", "get_weather"),
		responses.ResponseInputItemParamOfFunctionCall(agenttest.PyWeatherArg, "py_2", "fetch_guide"),
		output("py_1", agenttest.PyWeather), output("py_2", agenttest.PyGuide),
		responses.ResponseInputItemParamOfMessage(agenttest.PyAnswer, responses.EasyInputMessageRoleAssistant)}
	agenttest.CheckAfter(t, rec, responsesMemory(client, prefix...), responsesAsk(client), nil)
}

// A streamed answer, accumulated, is stored as the same message as the
// unstreamed one: text, calls, model and usage.
func TestChatStream(t *testing.T) {
	client, rec := fake(t)
	params := openai.ChatCompletionNewParams{Model: "gpt-test", Tools: chatTools()}
	o := remopenai.Options{System: agenttest.System}
	agenttest.CheckStream(t, rec, remopenai.Ask(&client, params, o), remopenai.AskStream(&client, params, o, nil))
}

// A streamed Responses answer is stored from response.completed as the same
// message as the unstreamed one: reasoning items, text, calls, usage.
func TestResponsesStream(t *testing.T) {
	client, rec := fake(t)
	params := responses.ResponseNewParams{Model: "gpt-test", Tools: responsesTools()}
	o := remopenai.Options{System: agenttest.System}
	agenttest.CheckStream(t, rec, remopenai.AskResponses(&client, params, o), remopenai.AskResponsesStream(&client, params, o, nil))
}

// A stream that stops before response.completed stores nothing: the
// answer is an error.
func TestResponsesStreamCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}}\n\n"))
	}))
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0))
	ask := remopenai.AskResponsesStream(&client, responses.ResponseNewParams{Model: "m"}, remopenai.Options{}, nil)
	if _, err := ask(context.Background(), []models.HistoryMessage{{Role: "user", Content: "hi"}}); err == nil || !strings.Contains(err.Error(), "response.completed") {
		t.Fatalf("a cut stream: %v", err)
	}
}

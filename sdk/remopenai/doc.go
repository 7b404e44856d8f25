// Package remopenai maps a remstore history to what github.com/openai/openai-go/v3
// sends (Chat Completions messages, Responses input items) and the SDK's answers
// back to messages to store; it imports no other model SDK.
//
// A turn on Chat Completions, the tools run by run (rem_lookup by RunTurn):
//
//	params := openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o, Tools: append(tools, remopenai.LookupTool())}
//	ask := remopenai.Ask(&client, params, remopenai.Options{System: "You are helpful."})
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, ask, run)
//
// AskStream streams the answer and stores the accumulated completion, the
// same message as Ask's; AskResponses is Ask on the Responses API. The same
// turn by hand:
//
//	h, _ := store.Load(ctx, "chat-1")
//	msgs, _ := remopenai.Messages(h.Messages, remopenai.Options{System: "You are helpful."})
//	resp, _ := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
//		Model: openai.ChatModelGPT4o, Messages: msgs, Tools: append(tools, remopenai.LookupTool())})
//	answer, _ := remopenai.FromCompletion(resp)
//	turn := []models.HistoryMessage{answer}
//	for _, c := range answer.ToolCalls {
//		turn = append(turn, sdk.ToolResult(c, run(c)))  // sdk.HandleLookup runs rem_lookup
//	}
//	_, _ = store.Append(ctx, "chat-1", turn)
//
// A tool result is sent as pydantic-ai sends it (sdk.ResultText): a stored
// JSON string as the text it holds, anything else as stored.
//
// What the history cannot carry is refused with an error naming the field, never
// dropped: a refusal, audio, a custom tool call, a deprecated function_call, an
// output item other than a message, a function call or a reasoning item.
package remopenai

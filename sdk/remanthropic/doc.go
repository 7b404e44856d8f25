// Package remanthropic maps a remstore history to the Messages API request of
// github.com/anthropics/anthropic-sdk-go/v2 (system apart, tool_use and
// tool_result blocks) and a response back to the message to store; it imports
// no other model SDK. A turn, the tools run by run (rem_lookup by RunTurn):
//
//	params := anthropic.MessageNewParams{Model: model, MaxTokens: 1024, Tools: append(tools, remanthropic.LookupTool())}
//	ask := remanthropic.Ask(&client, params, remanthropic.Options{System: "You are helpful."})
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, ask, run)
//
// AskStream streams the answer and stores the message the events accumulate
// into, the same as Ask's. The same turn by hand:
//
//	h, _ := store.Load(ctx, "chat-1")
//	system, msgs, _ := remanthropic.Messages(h.Messages, remanthropic.Options{System: "You are helpful."})
//	resp, _ := client.Messages.New(ctx, anthropic.MessageNewParams{Model: model, MaxTokens: 1024,
//		System: system, Messages: msgs, Tools: append(tools, remanthropic.LookupTool())})
//	answer, _ := remanthropic.FromMessage(resp)
//	turn := []models.HistoryMessage{answer}
//	for _, c := range answer.ToolCalls {
//		turn = append(turn, sdk.ToolResult(c, run(c)))
//	}
//	_, _ = store.Append(ctx, "chat-1", turn)
//
// Thinking and redacted thinking blocks are kept whole (the reasoning key,
// provider "anthropic") and sent back before the answer's text and tool
// calls, signature intact, as the API requires within a tool loop. Server
// tool blocks and citations are refused, naming the block; several text
// blocks of one answer are joined into one. A tool result is sent as
// pydantic-ai sends it (sdk.ResultText): a stored JSON string as the text it
// holds, anything else as stored.
package remanthropic

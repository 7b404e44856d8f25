// Package remanthropic maps a remstore history to the Messages API request of
// github.com/anthropics/anthropic-sdk-go/v2 (system apart, tool_use and
// tool_result blocks) and a response back to the message to store; it imports
// no other model SDK.
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
// blocks of one answer are joined into one.
package remanthropic

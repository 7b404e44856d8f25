// Package sdk is what every model SDK adapter under sdk/ shares: the Store a
// Go agent keeps its session in (the library through [Library], or serve
// through package client), the REM LOOKUP tool, and a tool result as a message.
//
// One turn, with any adapter (remopenai, remanthropic, remgenai, remlangchain):
//
//	h, _ := store.Load(ctx, "chat-1")          // compressed, tool calls typed
//	req := remopenai.Messages(h.Messages, opts)           // what the SDK sends
//	resp, _ := client.Chat.Completions.New(ctx, ...)   // the model call
//	answer, _ := remopenai.FromCompletion(resp)        // what to store
//	_, _ = store.Append(ctx, "chat-1", append([]models.HistoryMessage{answer}, results...))
//
// The adapters pair calls with results through convert.Pair, the rule the
// pydantic-ai history uses, so every side sees the same conversation.
package sdk

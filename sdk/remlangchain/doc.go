// Package remlangchain puts a remstore session behind github.com/tmc/langchaingo:
// [History] is a schema.ChatMessageHistory (memory.NewConversationBuffer takes it
// as its chat history), and [MessageContents] / [FromChoice] convert a history to
// the []llms.MessageContent that llms.Model.GenerateContent sends and an answer
// back; it imports no other model SDK. A turn, the tools run by run
// (rem_lookup by RunTurn):
//
//	ask := remlangchain.Ask(llm, remlangchain.Options{System: "You are helpful."}, llms.WithTools(append(tools, remlangchain.LookupTool())))
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, ask, run)
//
// The same turn by hand:
//
//	h, _ := store.Load(ctx, "chat-1")
//	msgs, _ := remlangchain.MessageContents(h.Messages, remlangchain.Options{System: "You are helpful."})
//	resp, _ := llm.GenerateContent(ctx, msgs, llms.WithTools(append(tools, remlangchain.LookupTool())))
//	answer, _ := remlangchain.FromChoice(resp.Choices[0])
//	turn := []models.HistoryMessage{answer}
//	for _, c := range answer.ToolCalls {
//		turn = append(turn, sdk.ToolResult(c, run(c)))
//	}
//	_, _ = store.Append(ctx, "chat-1", turn)
//
// langchaingo keeps a deepseek-style ReasoningContent on a choice; it is kept in
// the reasoning key (provider "langchaingo") and, as langchaingo itself does,
// not sent back. A deprecated FunctionCall without ToolCalls is refused.
// MessageContents sends a tool result as pydantic-ai sends it
// (sdk.ResultText); History gives back what was stored.
package remlangchain

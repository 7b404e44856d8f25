// Package remgenai maps a remstore history to the []*genai.Content that
// google.golang.org/genai sends (FunctionCall and FunctionResponse parts, the
// system instruction apart) and a response back to the message to store; it
// imports no other model SDK.
//
//	h, _ := store.Load(ctx, "chat-1")
//	system, contents, _ := remgenai.Contents(h.Messages, remgenai.Options{System: "You are helpful."})
//	resp, _ := client.Models.GenerateContent(ctx, model, contents, &genai.GenerateContentConfig{
//		SystemInstruction: system, Tools: []*genai.Tool{{FunctionDeclarations: append(decls, remgenai.LookupDeclaration())}}})
//	answer, _ := remgenai.FromResponse(resp)
//	turn := []models.HistoryMessage{answer}
//	for _, c := range answer.ToolCalls {
//		turn = append(turn, remgenai.ToolResult(c, map[string]any{"output": run(c)}))
//	}
//	_, _ = store.Append(ctx, "chat-1", turn)
//
// A function response is an object: a stored tool result whose text is a JSON
// object is sent as that object, any other as {"output": text}. Thought parts
// and thought signatures are kept (the reasoning key, provider "google") and
// sent back where they stood: thoughts first, each signature on its text or
// call. A call the model sent without an id gets one named "genai-…", which is
// never sent back. Parts other than text, thoughts, function calls and
// responses are refused, naming the part.
package remgenai

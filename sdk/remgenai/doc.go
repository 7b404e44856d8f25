// Package remgenai maps a remstore history to the []*genai.Content that
// google.golang.org/genai sends (FunctionCall and FunctionResponse parts, the
// system instruction apart) and a response back to the message to store; it
// imports no other model SDK. A turn, the tools run by run (rem_lookup by RunTurn):
//
//	config := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: append(decls, remgenai.LookupDeclaration())}}}
//	ask := remgenai.Ask(client, "gemini-2.5-flash", config, remgenai.Options{System: "You are helpful."})
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, ask, run)
//
// AskStream streams the answer and stores its chunks as FromChunks maps
// them, the same message as Ask's. The same turn by hand:
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
// A function response is an object, sent as pydantic-ai sends it
// (sdk.ResultObject): a stored tool result whose text is a JSON object as that
// object, another JSON value v as {"return_value": v}, text that is not JSON
// as {"raw": text}. Thought parts and thought signatures are kept (the
// reasoning key, provider "google") and sent back where they stood: thoughts
// first, each signature on its text or call. A call Gemini made goes back as
// it came, signed or not; the first call of an answer another writer stored
// gets the signature Google documents for calls Gemini did not make
// (skip_thought_signature_validator). A call the model sent without an id
// gets one named "genai-…", which is never sent back. Parts other than text, thoughts, function calls and
// responses are refused, naming the part.
package remgenai

// Package convert turns a stored history into the JSON that
// pydantic-ai's ModelMessagesTypeAdapter.validate_json accepts, in 1.42 and
// 2.x alike, synthesizing the tool-call parts that storage never kept.
//
//	out, _ := convert.JSON(history, convert.Options{SystemPrompt: "You are helpful."})
//
// It is pure and deterministic: the same input (and Options.Now) gives the same
// bytes. Only fields both pydantic-ai versions accept are emitted.
package convert

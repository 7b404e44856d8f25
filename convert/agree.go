package convert

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/remstore/remstore/models"
)

// CheckSource refuses a message whose SourceKey (the pydantic-ai parts a
// row carries) would send the model something its row does not show: a
// pydantic-ai load rebuilds the parts from the source, while a plain load,
// search, the viewer and export read the row. The source is decoded again
// as DecodePydanticAI decodes a message, with the row's content put back
// where it came from; it must give exactly this row (role, text, tool
// fields, tool calls). A system prompt hidden in a user row's source, or a
// tool call that is not in the row's tool_calls, is refused.
// It returns "" when the source agrees or m has none, else the reason.
func CheckSource(m models.HistoryMessage) string {
	var raw json.RawMessage
	for _, f := range m.Extra {
		if f.Key == SourceKey {
			raw = f.Value
		}
	}
	if raw == nil {
		return ""
	}
	src, ok := sourceOf(&m)
	if !ok {
		return "not a pydantic-ai source remstore writes: an object with \"message\" or \"parts\" whose from_row indexes name parts"
	}
	kind := "request"
	env := map[string]json.RawMessage{}
	if src.Message != nil {
		if json.Unmarshal(src.Message["kind"], &kind) != nil {
			return `message.kind must be "request" or "response"`
		}
		for k, v := range src.Message {
			env[k] = v
		}
	}
	env["kind"], _ = json.Marshal(kind)
	if kind == "response" && src.Message == nil {
		return "a response's source carries its message"
	}
	// fillContent reads the row as a load prints it; a stored message is
	// whole, so it is never the cut form here.
	whole := m
	whole.Compressed = false
	parts := fillContent(&whole, src)
	env["parts"], _ = json.Marshal(parts)
	msg, err := json.Marshal(env)
	if err != nil {
		return err.Error()
	}
	var in Ingested
	if err := in.add(0, msg, map[string]json.RawMessage{}); err != nil {
		return "its parts do not decode: " + err.Error()
	}
	if len(in.Messages) != 1 {
		return fmt.Sprintf("its parts make %d messages, not this one: a pydantic-ai load would send the model what no other view shows", len(in.Messages))
	}
	return differs(m, in.Messages[0])
}

// differs names the first field in which the row m and the row its source
// decodes to (want) disagree.
func differs(m, want models.HistoryMessage) string {
	say := func(field string, got, from any) string {
		return fmt.Sprintf("its parts give %s %s, the message has %s: a pydantic-ai load would send the model what no other view shows",
			field, quoteAny(from), quoteAny(got))
	}
	if m.Role.Normalize() != want.Role.Normalize() {
		return say("role", string(m.Role), string(want.Role))
	}
	if m.Content != want.Content && !(m.Role.IsTool() && models.SameJSON(m.Content, want.Content)) {
		return say("content", truncateRunes(m.Content, 40), truncateRunes(want.Content, 40))
	}
	if m.ToolCallID != want.ToolCallID {
		return say("tool_call_id", m.ToolCallID, want.ToolCallID)
	}
	if m.ToolName != want.ToolName {
		return say("tool_name", m.ToolName, want.ToolName)
	}
	if !slices.EqualFunc(m.ToolCalls, want.ToolCalls, func(a, b models.ToolCall) bool {
		return a.ID == b.ID && a.Name == b.Name && models.SameJSON(a.Arguments, b.Arguments)
	}) {
		return fmt.Sprintf("its tool-call parts (%d) are not the message's tool_calls (%d, the same ids, names and arguments): a pydantic-ai load would send the model calls no other view shows",
			len(want.ToolCalls), len(m.ToolCalls))
	}
	return ""
}

func quoteAny(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

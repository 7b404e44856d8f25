package sessionstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/remstore/remstore/models"
)

// agentsRoles maps an Agents SDK message's role to its row's, as the Python
// client's item_to_message does (python/src/remstore/agents.py).
var agentsRoles = map[string]models.Role{"user": models.RoleUser, "system": models.RoleSystem,
	"developer": models.RoleSystem, "assistant": models.RoleAssistant}

// checkAgentsItem refuses a message whose OpenAI Agents SDK item (the
// AgentsSourceKey extra, which RemstoreSession gives back to the SDK as it
// is) is not what its row shows: the item is mapped to a row the way the
// Python client maps it, and role, text, call id and tool calls must agree
// (issue 42, M4: a user row could carry a "developer" item, or an answer a
// function call, that no other view shows). "" when it agrees.
func checkAgentsItem(m models.HistoryMessage, raw json.RawMessage) string {
	var it map[string]json.RawMessage
	if json.Unmarshal(raw, &it) != nil {
		return "must be an object: an Agents SDK item"
	}
	str := func(k string) (string, bool) {
		var s string
		if v, ok := it[k]; !ok || json.Unmarshal(v, &s) != nil {
			return "", false
		}
		return s, true
	}
	kind, hasKind := str("type")
	if !hasKind && it["type"] != nil && string(it["type"]) != "null" {
		return "type must be a string"
	}
	role, _ := str("role")
	var want models.HistoryMessage
	switch {
	case (kind == "" || kind == "message") && agentsRoles[role] != "":
		want = models.HistoryMessage{Role: agentsRoles[role], Content: agentsText(it["content"])}
	case kind == "function_call":
		id, _ := str("call_id")
		name, _ := str("name")
		args, ok := str("arguments")
		if a := bytes.TrimSpace(it["arguments"]); !ok && len(a) > 0 && string(a) != "null" {
			var buf bytes.Buffer
			if json.Compact(&buf, a) == nil {
				args = buf.String() // an object given as one: kept as its text, as a store keeps it
			}
		}
		if args == "" {
			args = "{}"
		}
		want = models.HistoryMessage{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: id, Name: name, Arguments: args}}}
	case kind == "function_call_output":
		id, _ := str("call_id")
		out, ok := str("output")
		if !ok {
			out = agentsText(it["output"])
		}
		want = models.HistoryMessage{Role: models.RoleTool, Content: out, ToolCallID: id}
	default: // reasoning and the other items: an answer without text
		want = models.HistoryMessage{Role: models.RoleAssistant}
	}
	say := func(field string, item, row any) string {
		return fmt.Sprintf("the item gives %s %q, the message has %q: the Agents SDK would be sent what no other view shows", field, fmt.Sprint(item), fmt.Sprint(row))
	}
	if m.Role.Normalize() != want.Role.Normalize() {
		return say("role", want.Role, m.Role)
	}
	// A long answer comes back cut; its item keeps the whole text.
	if !m.Compressed && m.Content != want.Content && !models.SameJSON(m.Content, want.Content) {
		return say("content", truncate(want.Content, 40), truncate(m.Content, 40))
	}
	if want.Role == models.RoleTool && m.ToolCallID != want.ToolCallID {
		return say("tool_call_id", want.ToolCallID, m.ToolCallID)
	}
	if !slices.EqualFunc(m.ToolCalls, want.ToolCalls, func(a, b models.ToolCall) bool {
		return a.ID == b.ID && a.Name == b.Name && (a.Arguments == b.Arguments || models.SameJSON(a.Arguments, b.Arguments))
	}) {
		return fmt.Sprintf("the item's function calls (%d) are not the message's tool_calls (%d): the Agents SDK would be sent calls no other view shows",
			len(want.ToolCalls), len(m.ToolCalls))
	}
	return ""
}

// agentsText is a content's text as the Python client reads it: a string,
// or the text (or refusal) of each part joined by a blank line; any other
// JSON value is compared as JSON.
func agentsText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) == nil {
		var out []string
		for _, p := range parts {
			var part map[string]json.RawMessage
			if json.Unmarshal(p, &part) != nil {
				continue
			}
			v, ok := part["text"]
			if !ok {
				v = part["refusal"]
			}
			var t string
			if v != nil && string(v) != "null" && json.Unmarshal(v, &t) == nil {
				out = append(out, t)
			}
		}
		return strings.Join(out, "\n\n")
	}
	return string(raw)
}

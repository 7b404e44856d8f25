package msgcheck

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// MessageKey is one key a store accepts in a history message and where a
// stored row keeps it.
type MessageKey struct {
	Name  string
	Keeps string // where the row keeps it, in words (docs/reference.md)
	// Extra: carried in HistoryMessage.Extra (the others are its fields,
	// which validateBatch and the writer read by name).
	Extra bool
}

// keyRule is a MessageKey with what the writer does with it. messageKeys is
// the one table of accepted keys: validation refuses any other key, newRow
// keeps each extra as its rule says, and docs/reference.md prints it
// (remstore reference). A new key is a row here.
type keyRule struct {
	MessageKey
	// check refuses a bad value of an extra (nil: any JSON); skipJSON
	// leaves out the JSON size and depth check.
	check    func(i int, m models.HistoryMessage, f models.Field, decoded bool) error
	skipJSON bool
}

var messageKeys = []keyRule{
	{MessageKey: MessageKey{"role", "column `role`", false}},
	{MessageKey: MessageKey{"content", "column `content`", false}},
	{MessageKey: MessageKey{"timestamp", "`metadata.timestamp` (the row's `created_at` is the store's clock)", false}},
	{MessageKey: MessageKey{"id", "column `id` (a new UUID when absent)", false}},
	{MessageKey: MessageKey{"tool_call_id", "`metadata.tool_call_id`, on a `tool` row", false}},
	{MessageKey: MessageKey{"tool_name", "`metadata.tool_name`, on a `tool` row", false}},
	{MessageKey: MessageKey{"tool_arguments", "`metadata.tool_arguments`, on a `tool` row", false}},
	{MessageKey: MessageKey{"tool_calls", "column `tool_calls` (`{\"items\": [...]}`), on an assistant row", true}, check: func(i int, _ models.HistoryMessage, f models.Field, _ bool) error {
		// The decoder reads the key into HistoryMessage.ToolCalls; a
		// Go caller that put it in Extra would bypass its checks.
		return fieldErr(i, f.Key, "set HistoryMessage.ToolCalls, not an extra key")
	}},
	{MessageKey: MessageKey{"_compressed", "not stored: it describes a load", false}},
	{MessageKey: MessageKey{"_original_length", "not stored: it describes a load", false}},
	{MessageKey: MessageKey{"_entity_key", "not stored: the store gives the row its own key", false}},
	{MessageKey: MessageKey{"trace_id", "column `trace_id`", true}, check: checkIDString},
	{MessageKey: MessageKey{"span_id", "column `span_id`", true}, check: checkIDString},
	{MessageKey: MessageKey{"model", "`metadata.model`, on an assistant or `tool` row", true}},
	{MessageKey: MessageKey{"agent_schema", "`metadata.agent_schema`, on a `tool` row", true}},
	{MessageKey: MessageKey{"author", "`metadata.author`", true},
		check: func(i int, m models.HistoryMessage, f models.Field, _ bool) error {
			s, ok := m.ExtraString(f.Key)
			if !ok {
				return fieldErr(i, f.Key, "must be a string")
			}
			return models.CheckText(i, f.Key, s, models.MaxAgentName)
		}},
	{MessageKey: MessageKey{"usage", "`metadata.usage`", true},
		check: func(i int, _ models.HistoryMessage, f models.Field, _ bool) error {
			if len(f.Value) == 0 || f.Value[0] != '{' {
				return fieldErr(i, f.Key, "must be an object of token counts")
			}
			return nil
		}},
	{MessageKey: MessageKey{convert.SourceKey, "`metadata.pydantic_ai`: the pydantic-ai message it came from, which must agree with the row; its files, thinking and other parts are in the row's view", true}, check: checkSource},
	{MessageKey: MessageKey{visible.AgentsKey, "`metadata.openai_agents`: the Agents SDK item it came from, which must agree with the row; its images, files and hosted tools' output are in the row's view", true}, check: checkSource},
	{MessageKey: MessageKey{visible.ReasoningKey, "`metadata.reasoning`, on an assistant row, in forms its provider issued (signed thinking, encrypted content; no free text)", true},
		check: func(i int, m models.HistoryMessage, f models.Field, _ bool) error {
			return checkReasoning(i, m.Role, f.Value)
		}},
	{MessageKey: MessageKey{"compaction", "not stored: a full load's mark of a summary (the summary's row keeps its own)", true}, skipJSON: true},
}

// extraRules are messageKeys' extras by name.
var extraRules = func() map[string]*keyRule {
	m := map[string]*keyRule{}
	for i := range messageKeys {
		if messageKeys[i].Extra {
			m[messageKeys[i].Name] = &messageKeys[i]
		}
	}
	return m
}()

// writableKeys are the names of messageKeys, in order.
var writableKeys = func() []string {
	out := make([]string, len(messageKeys))
	for i, k := range messageKeys {
		out[i] = k.Name
	}
	return out
}()

// MessageKeys are the keys a store accepts, in order, and where a row keeps
// each.
func MessageKeys() []MessageKey {
	out := make([]MessageKey, len(messageKeys))
	for i, k := range messageKeys {
		out[i] = k.MessageKey
	}
	return out
}

func checkIDString(i int, m models.HistoryMessage, f models.Field, _ bool) error {
	s, ok := m.ExtraString(f.Key)
	if !ok && string(f.Value) != "null" {
		return fieldErr(i, f.Key, "must be a string")
	}
	return models.CheckText(i, f.Key, s, models.MaxIDLen)
}

// checkSource holds a source to its row (issue 42, M4): a pydantic-ai
// message decoded again must give this row (skipped for the decoder's own
// rows, decoded). An Agents SDK item is held to its row by the row's view
// (visible.Of, in validateBatch), which maps it as the Python client does.
func checkSource(i int, m models.HistoryMessage, f models.Field, decoded bool) error {
	if len(f.Value) == 0 || f.Value[0] != '{' {
		return fieldErr(i, f.Key, "must be an object")
	}
	if f.Key == convert.SourceKey && !decoded {
		if reason := convert.CheckSource(m); reason != "" {
			return fieldErr(i, f.Key, "%s", reason)
		}
	}
	return nil
}

// Keeps says whether a row of role r keeps field f (tool_call_id, tool_name,
// tool_arguments, agent_schema, model) in its metadata: the Python service
// keeps them for role "tool" alone (not "function"), and remstore keeps the
// model that wrote an answer too (a model SDK adapter sets it). checkKept
// refuses what a row would not keep.
func Keeps(r models.Role, f string) bool {
	return r == models.RoleTool || f == "model" && r.Normalize() == models.RoleAssistant
}

// RawTruthy is Python's truth value of a JSON value: the Python service adds
// tool_arguments only when it is truthy (not null, false, 0, "", [] or {}).
func RawTruthy(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	switch string(t) {
	case "", "null", "false", `""`, "[]", "{}":
		return false
	}
	// Only what can start a number is parsed: ParseFloat's error for the
	// rest (true, a string, an object) was an allocation for every row of
	// a load, a twentieth of a 1,000-message load's garbage.
	if c := t[0]; c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9' {
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return f != 0
		}
	}
	if t[0] == '[' || t[0] == '{' {
		// Empty is the opening bracket, white space, the closing one;
		// anything else is a member (decoding the value to see it was a
		// seventh of a 1,000-message load).
		inner := bytes.TrimSpace(t[1:])
		return !(len(inner) == 1 && inner[0] == t[0]+2) // '[' + 2 = ']', '{' + 2 = '}'
	}
	return true
}

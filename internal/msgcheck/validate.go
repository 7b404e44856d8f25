package msgcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// Limits on what one store call accepts. Content above MaxContentBytes is
// rejected rather than written: PostgreSQL takes up to 1 GB in a TEXT, but a
// message that large is a bug in the caller, and it would have to be held in
// memory several times over on its way in.
const (
	MaxContentBytes     = 64 << 20
	MaxBatchMessages    = 100_000
	MaxToolArgsBytes    = 16 << 20
	MaxJSONDepth        = 256
	MaxSessionKeyLength = models.MaxSessionName
)

// CheckMessage is the store's check of a message row's role and content,
// for every way rows come in: store calls and import.
func CheckMessage(i int, role, content string) error {
	if err := models.CheckText(i, "role", role, models.MaxRoleLen); err != nil {
		return err
	}
	if len(content) > MaxContentBytes {
		return fieldErr(i, "content", "larger than %d MiB (%d bytes)", MaxContentBytes>>20, len(content))
	}
	return models.CheckText(i, "content", content, 0)
}

// CheckJSON rejects JSON that JSONB refuses (the \u0000 escape), nesting
// deeper than MaxJSONDepth, and invalid UTF-8.
func CheckJSON(i int, field string, raw []byte, maxBytes int) error {
	if len(raw) > maxBytes {
		return fieldErr(i, field, "larger than %d bytes", maxBytes)
	}
	if !utf8.Valid(raw) {
		return fieldErr(i, field, "invalid UTF-8")
	}
	if !json.Valid(raw) {
		return fieldErr(i, field, "not valid JSON")
	}
	if bytes.Contains(raw, []byte(`\u0000`)) {
		return fieldErr(i, field, `contains \u0000, which PostgreSQL JSONB cannot store`)
	}
	if models.JSONDepth(raw) > MaxJSONDepth {
		return fieldErr(i, field, "nested deeper than %d levels", MaxJSONDepth)
	}
	return nil
}

// Messages checks a batch before anything is written: every message, with
// decoded for rows the pydantic-ai decoder made itself (their source is
// theirs by construction).
func Messages(msgs []models.HistoryMessage, decoded bool) error { return validateBatch(msgs, decoded) }

// WritableKeys are the message keys a store accepts (a copy).
func WritableKeys() []string { return slices.Clone(writableKeys) }

// validateBatch checks every message before anything is written, so a bad
// message in the middle of a batch leaves the database untouched. It refuses
// what the store would lose (SPEC §1): an unknown role, an unknown key, a
// timestamp that does not parse.
func validateBatch(msgs []models.HistoryMessage, decoded bool) error {
	if len(msgs) > MaxBatchMessages {
		return fieldErr(-1, "messages", "more than %d messages in one call (%d)", MaxBatchMessages, len(msgs))
	}
	ids := map[uuid.UUID]int{}
	for i, m := range msgs {
		if err := CheckMessage(i, string(m.Role), m.Content); err != nil {
			return err
		}
		if err := models.CheckRole(i, m.Role); err != nil {
			return err
		}
		if m.ID != "" {
			id, err := uuid.Parse(m.ID)
			if err != nil {
				return fieldErr(i, "id", "not a UUID: %q", Truncate(m.ID, 60))
			}
			if j, dup := ids[id]; dup {
				return fieldErr(i, "id", "same id as message %d", j)
			}
			ids[id] = i
		}
		if m.Timestamp != nil {
			if err := models.CheckText(i, "timestamp", *m.Timestamp, 64); err != nil {
				return err
			}
			if _, err := models.ParseTimestamp(*m.Timestamp); err != nil {
				return fieldErr(i, "timestamp", "%q is not an ISO-8601 time (like 2024-01-15T10:30:00+00:00) or null", *m.Timestamp)
			}
		}
		for _, f := range []struct{ name, v string }{{"tool_call_id", m.ToolCallID}, {"tool_name", m.ToolName}} {
			if err := models.CheckText(i, f.name, f.v, 1024); err != nil {
				return err
			}
		}
		if err := checkKept(i, m); err != nil {
			return err
		}
		if m.ToolArguments != nil {
			if err := CheckJSON(i, "tool_arguments", m.ToolArguments, MaxToolArgsBytes); err != nil {
				return err
			}
		}
		if err := checkToolCalls(i, m); err != nil {
			return err
		}
		for _, f := range m.Extra {
			if err := models.CheckText(i, f.Key, f.Key, 256); err != nil {
				return err
			}
			r := extraRules[f.Key]
			if r == nil {
				// The peer drops keys it does not know; remstore refuses
				// them, so that a typo is not stored as a missing field.
				return fieldErr(i, f.Key, "not a message key; the keys are %s%s",
					strings.Join(writableKeys, ", "), models.DidYouMean(f.Key, writableKeys))
			}
			if r.check != nil {
				if err := r.check(i, m, f, decoded); err != nil {
					return err
				}
			}
			if r.skipJSON {
				continue
			}
			if err := CheckJSON(i, f.Key, f.Value, MaxToolArgsBytes); err != nil {
				return err
			}
		}
		// What a model would be sent that the row's view cannot show: a
		// reasoning item in a form its provider did not issue, an Agents
		// SDK item or a pydantic-ai part that is not the row's.
		if err := visible.Of(m).Err(i); err != nil {
			return err
		}
	}
	return nil
}

// checkKept refuses what a store would accept and then drop (SPEC §1:
// nothing silently changed): the tool fields on a message that is not a
// tool result, a model on a message that is neither an answer nor a tool
// result, agent_schema off a tool result. A legacy "function" result keeps
// its text and role only: the peer's rule keeps these fields on "tool" rows
// alone, and its load returns them for those alone, so a "function" row
// with them is refused with a pointer to "tool". A loaded message's
// _entity_key, _original_length and _compressed describe the load and are
// accepted, not stored.
func checkKept(i int, m models.HistoryMessage) error {
	why := "it would be dropped"
	if m.Role == models.RoleFunction {
		why = `a "function" row keeps its text only, as the Python service's; send the result as role "tool" to keep it`
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"tool_call_id", m.ToolCallID != ""}, {"tool_name", m.ToolName != ""}, {"tool_arguments", RawTruthy(m.ToolArguments)}} {
		if f.set && !Keeps(m.Role, f.name) {
			return fieldErr(i, f.name, "only a tool message keeps it (role %q): %s", string(m.Role), why)
		}
	}
	for _, f := range m.Extra {
		if string(f.Value) == "null" || !RawTruthy(f.Value) {
			continue
		}
		switch {
		case f.Key == "model" && !Keeps(m.Role, f.Key):
			return fieldErr(i, f.Key, "only an assistant or tool message keeps it (role %q): %s", string(m.Role), why)
		case f.Key == "agent_schema" && !Keeps(m.Role, f.Key):
			return fieldErr(i, f.Key, "only a tool message keeps it (role %q): %s", string(m.Role), why)
		}
	}
	return nil
}

// checkReasoning checks a visible.ReasoningKey value: on an assistant message, a
// list of {"provider": non-empty string, "item": any JSON}.
func checkReasoning(i int, role models.Role, raw json.RawMessage) error {
	if role.Normalize() != models.RoleAssistant {
		return fieldErr(i, visible.ReasoningKey, "only an assistant message carries reasoning (role %q)", string(role))
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return fieldErr(i, visible.ReasoningKey, `must be a list of {"provider", "item"} objects`)
	}
	for j, it := range items {
		at := fmt.Sprintf("%s[%d]", visible.ReasoningKey, j)
		var p string
		if it == nil || json.Unmarshal(it["provider"], &p) != nil || p == "" {
			return fieldErr(i, at+".provider", "must be a non-empty string")
		}
		if _, ok := it["item"]; !ok || len(it) != 2 {
			return fieldErr(i, at, `must have exactly the keys "provider" and "item"`)
		}
	}
	return nil
}

// checkToolCalls checks an assistant message's typed tool calls: each
// ToolCall.Check, no id twice, all of them together within
// MaxToolArgsBytes; other roles make no calls.
func checkToolCalls(i int, m models.HistoryMessage) error {
	if len(m.ToolCalls) == 0 {
		return nil
	}
	if m.Role.Normalize() != models.RoleAssistant {
		return fieldErr(i, "tool_calls", "only an assistant message makes tool calls (role %q)", string(m.Role))
	}
	if len(m.ToolCalls) > models.MaxToolCalls {
		return fieldErr(i, "tool_calls", "more than %d tool calls in one message (%d)", models.MaxToolCalls, len(m.ToolCalls))
	}
	seen, size := map[string]int{}, 0
	for j, c := range m.ToolCalls {
		if err := c.Check(); err != nil {
			fe := err.(*models.FieldError)
			return fieldErr(i, fmt.Sprintf("tool_calls[%d].%s", j, fe.Field), "%s", fe.Reason)
		}
		if c.Arguments != "" {
			// The rule every JSON value of a message meets (size, depth).
			if err := CheckJSON(i, fmt.Sprintf("tool_calls[%d].arguments", j), []byte(c.Arguments), MaxToolArgsBytes); err != nil {
				return err
			}
		}
		if k, dup := seen[c.ID]; dup {
			return fieldErr(i, fmt.Sprintf("tool_calls[%d].id", j), "same id as tool_calls[%d]", k)
		}
		seen[c.ID] = j
		size += len(c.ID) + len(c.Name) + len(c.Arguments)
	}
	if size > MaxToolArgsBytes {
		return fieldErr(i, "tool_calls", "larger than %d bytes", MaxToolArgsBytes)
	}
	return nil
}

// Truncate shortens s to n runes for an error message.
func Truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func fieldErr(i int, field, format string, a ...any) error {
	return &models.FieldError{Index: i, Field: field, Reason: fmt.Sprintf(format, a...)}
}

package models

import (
	"bytes"
	"encoding/json"
)

// HistoryMessage is one message of a conversation as the Python service passes it
// around: a JSON object with the Python service's keys. Its JSON encoding writes the
// keys in the Python service's order (role, content, timestamp, id, tool_call_id,
// tool_name, tool_arguments, tool_calls, any other keys, _compressed, _original_length,
// _entity_key) and omits what is not set.
type HistoryMessage struct {
	Role    Role
	Content string // JSON null is read as ""
	// Timestamp is the ISO-8601 string, kept verbatim; nil encodes as null.
	Timestamp *string
	// OmitTimestamp drops the key entirely. The decoder sets it when the input
	// had no timestamp key, so pass-through tools do not invent one.
	OmitTimestamp bool
	ID            string          // optional pre-generated id; "" = absent
	ToolCallID    string          // "" = absent
	ToolName      string          // "" = absent
	ToolArguments json.RawMessage // nil = absent; any JSON value
	// ToolCalls are the calls an assistant message makes (key tool_calls;
	// the tool_calls column's {"items": [...]}). A load fills them when it
	// is asked for extras or for the pydantic-ai conversion; nil = absent.
	ToolCalls []ToolCall

	Compressed     bool   // _compressed
	OriginalLength int    // _original_length, code points of the full content
	EntityKey      string // _entity_key; "" = absent

	// Extra holds every other key of the input object, in input order, with
	// its value verbatim (compacted). They pass through compress and convert
	// untouched; the store reads a few of them (trace_id, span_id, model,
	// agent_schema) and ignores the rest, as the Python service does.
	Extra []Field
}

// Field is one key/value pair of a JSON object, value kept as raw JSON.
type Field struct {
	Key   string
	Value json.RawMessage
}

// ExtraRaw returns the raw JSON value of an extra key.
func (m *HistoryMessage) ExtraRaw(key string) (json.RawMessage, bool) {
	for _, f := range m.Extra {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// ExtraString returns the string value of an extra key, if it is a JSON string.
func (m *HistoryMessage) ExtraString(key string) (string, bool) {
	for _, f := range m.Extra {
		if f.Key == key {
			var s string
			if json.Unmarshal(f.Value, &s) == nil {
				return s, true
			}
			return "", false
		}
	}
	return "", false
}

// Clone returns a deep copy, so a caller cannot change another's data.
func (m HistoryMessage) Clone() HistoryMessage {
	c := m
	if m.Timestamp != nil {
		c.Timestamp = Ptr(*m.Timestamp)
	}
	c.ToolArguments = bytes.Clone(m.ToolArguments)
	if m.ToolCalls != nil {
		c.ToolCalls = append([]ToolCall{}, m.ToolCalls...)
	}
	if m.Extra != nil {
		c.Extra = make([]Field, len(m.Extra))
		for i, f := range m.Extra {
			c.Extra[i] = Field{Key: f.Key, Value: bytes.Clone(f.Value)}
		}
	}
	return c
}

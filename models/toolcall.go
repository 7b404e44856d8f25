package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// ToolCall is one tool call an assistant message makes: the canonical flat
// form {id, name, arguments} that every model SDK's call maps to. Arguments
// is the JSON text of the arguments, as the model wrote it ("" = none).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// MaxToolCalls bounds the tool calls of one message.
const MaxToolCalls = 512

// AppendToolCalls appends calls as the JSON list the tool_calls key and the
// tool_calls column's items hold: [{"id","name","arguments"}], arguments as
// a JSON string (the form OpenAI's API and the seed designs use).
func AppendToolCalls(b []byte, calls []ToolCall) []byte {
	b = append(b, '[')
	for i, c := range calls {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = AppendJSONString(b, c.ID)
		b = append(b, `,"name":`...)
		b = AppendJSONString(b, c.Name)
		b = append(b, `,"arguments":`...)
		b = AppendJSONString(b, c.Arguments)
		b = append(b, '}')
	}
	return append(b, ']')
}

// ParseToolCalls reads a tool_calls list. Each item is either the flat form
// {"id","name","arguments"} or OpenAI Chat's {"id","type":"function",
// "function":{"name","arguments"}} (what pydantic-ai ingest and the Python
// client's Agents session wrote before the flat form); arguments is a JSON
// string holding JSON, or a JSON object or array, kept as its compact text.
// Any other key, a missing id or name, or arguments that are not JSON is an
// error whose Field names the item and key (tool_calls[2].arguments), Index -1:
// callers set the message.
func ParseToolCalls(raw []byte) ([]ToolCall, error) {
	bad := func(field, format string, a ...any) error {
		return &FieldError{Index: -1, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if !utf8.Valid(raw) {
		return nil, bad("tool_calls", "invalid UTF-8")
	}
	if calls, ok := parseFlatToolCalls(raw); ok {
		return calls, nil
	}
	return parseToolCallsJSON(raw)
}

// parseToolCallsJSON is ParseToolCalls of valid UTF-8 through encoding/json:
// every form, and every error.
func parseToolCallsJSON(raw []byte) ([]ToolCall, error) {
	bad := func(field, format string, a ...any) error {
		return &FieldError{Index: -1, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	var items []map[string]json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, bad("tool_calls", `must be a list of {"id", "name", "arguments"} objects`)
	}
	if len(items) > MaxToolCalls {
		return nil, bad("tool_calls", "more than %d tool calls in one message (%d)", MaxToolCalls, len(items))
	}
	out := make([]ToolCall, 0, len(items))
	for j, it := range items {
		at := func(k string) string { return fmt.Sprintf("tool_calls[%d].%s", j, k) }
		if it == nil {
			return nil, bad(fmt.Sprintf("tool_calls[%d]", j), "must be an object")
		}
		str := func(obj map[string]json.RawMessage, k, field string) (string, error) {
			v, ok := obj[k]
			if !ok || string(v) == "null" {
				return "", nil
			}
			s, ok := unquote(v)
			if !ok {
				return "", bad(field, "must be a string")
			}
			return s, nil
		}
		var c ToolCall
		var err error
		if c.ID, err = str(it, "id", at("id")); err != nil {
			return nil, err
		}
		fields := it
		for _, k := range slices.Sorted(maps.Keys(it)) { // one error for one input, whatever the map order
			v := it[k]
			switch k {
			case "id", "name", "arguments":
			case "type":
				if s, ok := unquote(v); !ok || s != "function" {
					return nil, bad(at(k), `must be "function"`)
				}
			case "function":
				var fn map[string]json.RawMessage
				if json.Unmarshal(v, &fn) != nil || fn == nil {
					return nil, bad(at(k), `must be an object {"name", "arguments"}`)
				}
				for fk := range fn {
					if fk != "name" && fk != "arguments" {
						return nil, bad(at(k+"."+fk), "not a key of a function call; the keys are name, arguments")
					}
				}
				for _, k := range []string{"name", "arguments"} {
					if _, flat := it[k]; flat {
						return nil, bad(at(k), `given both flat and inside "function"`)
					}
				}
				fields = fn
			default:
				return nil, bad(at(k), "not a key of a tool call; the keys are id, name, arguments%s",
					DidYouMean(k, []string{"id", "name", "arguments"}))
			}
		}
		prefix := ""
		if _, nested := it["function"]; nested {
			prefix = "function."
		}
		if c.Name, err = str(fields, "name", at(prefix+"name")); err != nil {
			return nil, err
		}
		if c.Arguments, err = argumentsText(fields["arguments"], at(prefix+"arguments")); err != nil {
			return nil, err
		}
		if err := c.Check(); err != nil {
			fe := err.(*FieldError)
			fe.Field = fmt.Sprintf("tool_calls[%d].%s", j, fe.Field)
			return nil, fe
		}
		out = append(out, c)
	}
	return out, nil
}

// parseFlatToolCalls reads the list a store writes (AppendToolCalls: each
// item's id, name and arguments as JSON strings, in any order) without
// encoding/json, which decoded each item into a map by reflection: a tenth
// of a Go SDK turn's CPU (issue 57). ok is false for anything else (the
// nested form, another key or value type, a repeated key, a call Check
// refuses, JSON it does not read), which ParseToolCalls then reads, and
// refuses, the slow way: FuzzParseFlatToolCalls holds the two equal.
func parseFlatToolCalls(raw []byte) ([]ToolCall, bool) {
	i := skipWS(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	out := make([]ToolCall, 0, 2)
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return out, skipWS(raw, i+1) == len(raw)
	}
	for len(out) < MaxToolCalls {
		var c ToolCall
		var ok bool
		if i, ok = flatCall(raw, i, &c); !ok || c.Check() != nil {
			return nil, false
		}
		out = append(out, c)
		i = skipWS(raw, i)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipWS(raw, i+1)
		case i < len(raw) && raw[i] == ']':
			return out, skipWS(raw, i+1) == len(raw)
		default:
			return nil, false
		}
	}
	return nil, false
}

// flatCall reads the object {"id","name","arguments"} of string values at
// raw[i] into c; it returns the index past it.
func flatCall(raw []byte, i int, c *ToolCall) (int, bool) {
	if i >= len(raw) || raw[i] != '{' {
		return i, false
	}
	seen := 0
	i = skipWS(raw, i+1)
	for {
		key, j, ok := flatString(raw, i)
		if !ok {
			return i, false
		}
		i = skipWS(raw, j)
		if i >= len(raw) || raw[i] != ':' {
			return i, false
		}
		val, j, ok := flatString(raw, skipWS(raw, i+1))
		if !ok {
			return i, false
		}
		bit := 0
		switch key {
		case "id":
			c.ID, bit = val, 1
		case "name":
			c.Name, bit = val, 2
		case "arguments":
			c.Arguments, bit = val, 4
		}
		if bit == 0 || seen&bit != 0 {
			return i, false
		}
		seen |= bit
		i = skipWS(raw, j)
		if i >= len(raw) {
			return i, false
		}
		if raw[i] == '}' {
			return i + 1, true
		}
		if raw[i] != ',' {
			return i, false
		}
		i = skipWS(raw, i+1)
	}
}

// flatString reads the JSON string at raw[i]: its text and the index past
// it. Without escapes it is the bytes between the quotes (raw is valid
// UTF-8); with them, unquote reads it.
func flatString(raw []byte, i int) (string, int, bool) {
	if i >= len(raw) || raw[i] != '"' {
		return "", i, false
	}
	escaped := false
	for j := i + 1; j < len(raw); j++ {
		switch c := raw[j]; {
		case c == '\\':
			escaped = true
			j++
		case c < 0x20:
			return "", j, false
		case c == '"':
			if !escaped {
				return string(raw[i+1 : j]), j + 1, true
			}
			s, ok := unquote(raw[i : j+1])
			return s, j + 1, ok
		}
	}
	return "", i, false
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// argumentsText reads arguments given as a JSON string (of JSON text) or as
// a JSON object or array (kept as its compact text).
func argumentsText(v json.RawMessage, field string) (string, error) {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0 || string(v) == "null":
		return "", nil
	case v[0] == '"':
		s, _ := unquote(v)
		return s, nil
	case v[0] == '{' || v[0] == '[':
		return string(compact(v)), nil
	}
	return "", &FieldError{Index: -1, Field: field, Reason: "must be a JSON string of the arguments, or an object"}
}

// Check is what a store requires of a tool call: an id and a name (each
// text CheckText takes, at most 1024 characters, as tool_call_id and
// tool_name) and arguments that are "" or valid JSON. Field names the key,
// Index is -1. (The store also holds arguments to its size and depth
// bounds.)
func (c ToolCall) Check() error {
	for _, f := range []struct{ k, v string }{{"id", c.ID}, {"name", c.Name}} {
		if strings.TrimSpace(f.v) == "" {
			return &FieldError{Index: -1, Field: f.k, Reason: "missing or empty"}
		}
		if err := CheckText(-1, f.k, f.v, 1024); err != nil {
			return err
		}
	}
	if c.Arguments == "" {
		return nil
	}
	switch {
	case !utf8.ValidString(c.Arguments):
		return &FieldError{Index: -1, Field: "arguments", Reason: "invalid UTF-8"}
	case !json.Valid([]byte(c.Arguments)):
		return &FieldError{Index: -1, Field: "arguments", Reason: "not valid JSON: " + quoteShort(c.Arguments)}
	case strings.Contains(c.Arguments, `\u0000`) || strings.IndexByte(c.Arguments, 0) >= 0:
		return &FieldError{Index: -1, Field: "arguments", Reason: `contains \u0000, which PostgreSQL JSONB cannot store`}
	}
	if reason := CheckJSONValue([]byte(c.Arguments)); reason != "" {
		return &FieldError{Index: -1, Field: "arguments", Reason: reason}
	}
	return nil
}

// ArgumentsObject returns the arguments as a JSON object: "" is {}; a JSON
// string holding an object is that object. ok is false for anything else
// (a list, a number): callers that need an object say so.
func (c ToolCall) ArgumentsObject() (json.RawMessage, bool) {
	raw := bytes.TrimSpace([]byte(c.Arguments))
	for range 2 {
		switch {
		case len(raw) == 0:
			return json.RawMessage("{}"), true
		case raw[0] == '{' && json.Valid(raw):
			return compact(raw), true
		case raw[0] == '"':
			s, ok := unquote(raw)
			if !ok {
				return nil, false
			}
			raw = bytes.TrimSpace([]byte(s))
			continue
		}
		return nil, false
	}
	return nil, false
}

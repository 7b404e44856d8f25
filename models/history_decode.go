package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/remstore/remstore/internal/jsonvalid"
)

// The history message's JSON in: every key checked and named when wrong,
// one decoder for valid and invalid documents.

// UnmarshalJSON decodes one message object with the checks of DecodeHistory.
func (m *HistoryMessage) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	msg, err := decodeMessage(dec, 0)
	if err != nil {
		return err
	}
	*m = msg
	return nil
}

// DecodeHistory reads a JSON array of history messages. It rejects, with a
// *FieldError naming the message and the field: a value that is not an
// object, a missing or non-string role, keys of the wrong type, invalid UTF-8,
// duplicate keys, and anything after the array.
//
// A document that is valid JSON and an array of objects is walked once by
// hand (decodeValid); any other goes through encoding/json's tokens
// (decodeTokens), whose errors name what is wrong. Both hand each field to
// one messageDecoder, and FuzzDecodeHistory holds the two to the same
// messages and the same errors.
func DecodeHistory(data []byte) ([]HistoryMessage, error) {
	if jsonvalid.Valid(data) { // json.Valid's answer in a quarter of its time
		if out, ok, err := decodeValid(data); ok {
			return out, err
		}
	}
	return decodeTokens(data)
}

// decodeTokens is DecodeHistory through encoding/json's tokens.
func decodeTokens(data []byte) ([]HistoryMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, &FieldError{Index: -1, Reason: "malformed JSON: " + plainJSONError(err)}
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, &FieldError{Index: -1, Reason: "expected a JSON array of messages"}
	}
	var out []HistoryMessage
	for i := 0; dec.More(); i++ {
		m, err := decodeMessage(dec, i)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if _, err := dec.Token(); err != nil {
		return nil, &FieldError{Index: -1, Reason: "malformed JSON: " + plainJSONError(err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &FieldError{Index: -1, Reason: "trailing data after the JSON array"}
	}
	return finish(data, out)
}

// finish is the end of both decoders: the keys' UTF-8, and [] for none.
func finish(data []byte, out []HistoryMessage) ([]HistoryMessage, error) {
	if !utf8.Valid(data) {
		// Every value was checked; what is left is a key.
		return nil, &FieldError{Index: -1, Reason: "invalid UTF-8 in a key"}
	}
	if out == nil {
		out = []HistoryMessage{}
	}
	return out, nil
}

// decodeValid walks data, which json.Valid accepted, by hand: ok is false
// where it is not an array of objects (decodeTokens then says why).
func decodeValid(data []byte) (out []HistoryMessage, ok bool, err error) {
	w := walker{b: data}
	if w.next() != '[' {
		return nil, false, nil
	}
	w.i++
	for i := 0; ; i++ {
		if w.next() == ']' {
			break
		}
		if w.next() != '{' {
			return nil, false, nil
		}
		w.i++
		var m HistoryMessage
		d := newMessageDecoder(&m, i)
		for w.next() != '}' {
			k := objectKey(w.value())
			w.next() // ':'
			w.i++
			w.next()
			if err := d.field(k, w.value()); err != nil {
				return nil, true, err
			}
			if w.next() == ',' {
				w.i++
				w.next()
			}
		}
		w.i++
		if err := d.end(); err != nil {
			return nil, true, err
		}
		out = append(out, m)
		if w.next() == ',' {
			w.i++
		}
	}
	out, err = finish(data, out)
	return out, true, err
}

// objectKey reads a key as encoding/json does: invalid UTF-8 becomes U+FFFD
// (the error names the key so; finish refuses the document).
func objectKey(raw json.RawMessage) string {
	if len(raw) >= 2 {
		if k, ok := knownKey(raw[1 : len(raw)-1]); ok {
			return k
		}
	}
	if utf8.Valid(raw) {
		k, _ := unquote(raw)
		return k
	}
	var k string
	_ = json.Unmarshal(raw, &k)
	return k
}

// knownKey is a message key of the Python service's messages without allocating a string for it
// (a switch on string(b) does not copy b).
func knownKey(b []byte) (string, bool) {
	switch string(b) {
	case "role":
		return "role", true
	case "content":
		return "content", true
	case "timestamp":
		return "timestamp", true
	case "tool_call_id":
		return "tool_call_id", true
	case "tool_name":
		return "tool_name", true
	case "tool_arguments":
		return "tool_arguments", true
	case "tool_calls":
		return "tool_calls", true
	case "id":
		return "id", true
	}
	return "", false
}

// KnownRole is the role that b spells, without allocating a
// string for it (a decoder's or a database row's bytes); ok is false for
// any other text.
func KnownRole(b []byte) (Role, bool) {
	switch string(b) {
	case "user":
		return RoleUser, true
	case "assistant":
		return RoleAssistant, true
	case "tool":
		return RoleTool, true
	case "system":
		return RoleSystem, true
	}
	return "", false
}

// walker steps through valid JSON.
type walker struct {
	b []byte
	i int
}

// next skips white space and returns the byte there (0 at the end).
func (w *walker) next() byte {
	for w.i < len(w.b) {
		switch c := w.b[w.i]; c {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return c
		}
	}
	return 0
}

// value returns the value that starts at w.i and steps past it.
func (w *walker) value() json.RawMessage {
	start, depth := w.i, 0
	for w.i < len(w.b) {
		c := w.b[w.i]
		w.i++
		switch c {
		case '"':
			for w.i < len(w.b) && w.b[w.i] != '"' {
				if w.b[w.i] == '\\' {
					w.i++
				}
				w.i++
			}
			w.i++
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',', ':', ' ', '\t', '\n', '\r': // between the values of a container
		default: // a number, true, false or null: up to the next delimiter
			for w.i < len(w.b) && !delimiter(w.b[w.i]) {
				w.i++
			}
		}
		if depth == 0 {
			break
		}
	}
	return w.b[start:w.i]
}

func delimiter(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

func plainJSONError(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

func decodeMessage(dec *json.Decoder, i int) (HistoryMessage, error) {
	var m HistoryMessage
	tok, err := dec.Token()
	if err != nil {
		return m, &FieldError{Index: i, Reason: "malformed JSON: " + plainJSONError(err)}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return m, &FieldError{Index: i, Reason: "expected a JSON object"}
	}
	d := newMessageDecoder(&m, i)
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return m, &FieldError{Index: i, Reason: "malformed JSON: " + plainJSONError(err)}
		}
		k := kt.(string) // object keys are always strings
		// Before the value is read: a repeated key is named even where its
		// value is malformed (d.field says the same for valid documents).
		if d.saw(k) {
			return m, &FieldError{Index: i, Field: k, Reason: "duplicate key"}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return m, &FieldError{Index: i, Field: k, Reason: "malformed JSON: " + plainJSONError(err)}
		}
		if err := d.field(k, raw); err != nil {
			return m, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return m, &FieldError{Index: i, Reason: "malformed JSON: " + plainJSONError(err)}
	}
	return m, d.end()
}

// messageDecoder fills message i of a history from its fields, one by one:
// the rules of DecodeHistory, written once for both of its decoders.
type messageDecoder struct {
	m       *HistoryMessage
	i       int
	seen    [8]string       // the first keys: a message has a few, a map cost 2 allocations
	n       int             // of seen in use
	many    map[string]bool // past len(seen) keys: a hostile message's thousands stay O(1) each
	hasRole bool
}

func newMessageDecoder(m *HistoryMessage, i int) messageDecoder {
	m.OmitTimestamp = true
	return messageDecoder{m: m, i: i}
}

// saw reports whether key k came before in this message.
func (d *messageDecoder) saw(k string) bool {
	if d.many != nil {
		return d.many[k]
	}
	return slices.Contains(d.seen[:d.n], k)
}

// add notes key k.
func (d *messageDecoder) add(k string) {
	switch {
	case d.many != nil:
		d.many[k] = true
	case d.n == len(d.seen):
		d.many = make(map[string]bool, 2*len(d.seen))
		for _, s := range d.seen {
			d.many[s] = true
		}
		d.many[k] = true
	default:
		d.seen[d.n] = k
		d.n++
	}
}

// field takes key k's value raw (valid JSON).
func (d *messageDecoder) field(k string, raw json.RawMessage) error {
	m, i := d.m, d.i
	if d.saw(k) {
		return &FieldError{Index: i, Field: k, Reason: "duplicate key"}
	}
	d.add(k)
	if !utf8.Valid(raw) {
		return &FieldError{Index: i, Field: k, Reason: "invalid UTF-8"}
	}
	if reason := CheckJSONValue(raw); reason != "" {
		return &FieldError{Index: i, Field: k, Reason: reason}
	}
	isNull := string(raw) == "null"
	str := func(dst *string, nullable bool) error {
		if isNull && nullable {
			return nil
		}
		v, ok := unquote(raw)
		if isNull || !ok {
			return &FieldError{Index: i, Field: k, Reason: "must be a string"}
		}
		*dst = v
		return nil
	}
	switch k {
	case "role":
		if len(raw) > 2 && raw[0] == '"' {
			if r, ok := KnownRole(raw[1 : len(raw)-1]); ok {
				m.Role, d.hasRole = r, true
				return nil
			}
		}
		var s string
		if err := str(&s, false); err != nil {
			return err
		}
		m.Role, d.hasRole = Role(s), true
	case "content":
		return str(&m.Content, true)
	case "timestamp":
		m.OmitTimestamp = false
		if !isNull {
			var s string
			if err := str(&s, false); err != nil {
				return &FieldError{Index: i, Field: k, Reason: "must be a string or null"}
			}
			m.Timestamp = &s
		}
	case "id":
		return str(&m.ID, true)
	case "tool_call_id":
		return str(&m.ToolCallID, true)
	case "tool_name":
		return str(&m.ToolName, true)
	case "tool_arguments":
		m.ToolArguments = compact(raw)
	case "_compressed":
		if err := json.Unmarshal(raw, &m.Compressed); err != nil && !isNull {
			return &FieldError{Index: i, Field: k, Reason: "must be a boolean"}
		}
	case "_original_length":
		if !isNull {
			if err := json.Unmarshal(raw, &m.OriginalLength); err != nil || m.OriginalLength < 0 {
				return &FieldError{Index: i, Field: k, Reason: "must be a non-negative integer"}
			}
		}
	case "_entity_key":
		return str(&m.EntityKey, true)
	case "tool_calls":
		calls, err := ParseToolCalls(raw)
		if err != nil {
			fe := err.(*FieldError)
			fe.Index = i
			return fe
		}
		m.ToolCalls = calls
	default:
		m.Extra = append(m.Extra, Field{Key: k, Value: compact(raw)})
	}
	return nil
}

// end checks what only the whole object tells.
func (d *messageDecoder) end() error {
	if !d.hasRole {
		return &FieldError{Index: d.i, Field: "role", Reason: "missing"}
	}
	return nil
}

// unquote reads a JSON value the decoder has checked (valid JSON, valid
// UTF-8): a string without a backslash is its own text between the quotes,
// so the common string skips json.Unmarshal, a fifth of decoding a request.
// ok is false when raw is not a string. FuzzUnquote holds it to
// json.Unmarshal.
func unquote(raw json.RawMessage) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

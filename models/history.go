package models

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// HistoryMessage is one message of a conversation as the Python peer passes it
// around: a JSON object with the keys of SPEC §1. Its JSON encoding writes the
// keys in the peer's order (role, content, timestamp, id, tool_call_id,
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
	// agent_schema) and ignores the rest, as the peer does.
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

// MarshalJSON writes the message in the peer's key order. (encoding/json's
// Marshal escapes <, > and & in what this returns; EncodeHistory and an
// Encoder with SetEscapeHTML(false) keep them as they are.)
func (m HistoryMessage) MarshalJSON() ([]byte, error) {
	return m.AppendJSON(make([]byte, 0, len(m.Content)+96))
}

// AppendJSON appends what MarshalJSON returns to b: an encoder reuses one
// buffer for every message of a history.
func (m HistoryMessage) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, '{')
	first := true
	key := func(k string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = AppendJSONString(b, k)
		b = append(b, ':')
	}
	raw := func(field string, v []byte) error {
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, v); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		b = buf.Bytes()
		return nil
	}
	key("role")
	b = AppendJSONString(b, string(m.Role))
	key("content")
	b = AppendJSONString(b, m.Content)
	if !m.OmitTimestamp {
		key("timestamp")
		if m.Timestamp == nil {
			b = append(b, "null"...)
		} else {
			b = AppendJSONString(b, *m.Timestamp)
		}
	}
	if m.ID != "" {
		key("id")
		b = AppendJSONString(b, m.ID)
	}
	if m.ToolCallID != "" {
		key("tool_call_id")
		b = AppendJSONString(b, m.ToolCallID)
	}
	if m.ToolName != "" {
		key("tool_name")
		b = AppendJSONString(b, m.ToolName)
	}
	if m.ToolArguments != nil {
		key("tool_arguments")
		if err := raw("tool_arguments", m.ToolArguments); err != nil {
			return nil, err
		}
	}
	if len(m.ToolCalls) > 0 {
		key("tool_calls")
		b = AppendToolCalls(b, m.ToolCalls)
	}
	for _, f := range m.Extra {
		key(f.Key)
		if err := raw(f.Key, f.Value); err != nil {
			return nil, err
		}
	}
	if m.Compressed {
		key("_compressed")
		b = append(b, "true"...)
		key("_original_length")
		b = strconv.AppendInt(b, int64(m.OriginalLength), 10)
		if m.EntityKey != "" {
			key("_entity_key")
			b = AppendJSONString(b, m.EntityKey)
		}
	}
	return append(b, '}'), nil
}

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

// AppendJSONString appends s as a JSON string exactly as encoding/json's
// Encoder with SetEscapeHTML(false) writes it, so that <, > and & stay
// readable as in Python's json.dumps (TestAppendJSONStringIsEncodingJSON and
// FuzzAppendJSONString hold it to encoding/json): quote and backslash
// escaped, control characters as \n, \r, \t, \b, \f or \u00XX, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, the rest as it is. It used an
// encoder per string before: a sixth of serving a load. convert writes the
// pydantic-ai JSON with it too.
func AppendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// EncodeHistory writes msgs as one compact JSON array and a newline.
func EncodeHistory(w io.Writer, msgs []HistoryMessage) error {
	e := NewHistoryEncoder(w)
	for _, m := range msgs {
		if err := e.Encode(m); err != nil {
			return err
		}
	}
	return e.Close()
}

// HistoryEncoder writes a JSON array of messages one message at a time, so
// a long history can be written as it is read.
type HistoryEncoder struct {
	w   *bufio.Writer
	n   int
	buf []byte // the last message's bytes, reused for the next
}

// NewHistoryEncoder starts an array on w.
func NewHistoryEncoder(w io.Writer) *HistoryEncoder {
	return &HistoryEncoder{w: bufio.NewWriterSize(w, 64<<10)}
}

// Encode writes the next message.
func (e *HistoryEncoder) Encode(m HistoryMessage) error {
	sep := byte(',')
	if e.n == 0 {
		sep = '['
	}
	j, err := m.AppendJSON(append(e.buf[:0], sep))
	if err != nil {
		return fmt.Errorf("message %d: %w", e.n, err)
	}
	e.buf = j
	e.n++
	_, err = e.w.Write(j)
	return err
}

// Count is how many messages were written.
func (e *HistoryEncoder) Count() int { return e.n }

// Close ends the array and flushes.
func (e *HistoryEncoder) Close() error {
	end := "]\n"
	if e.n == 0 {
		end = "[]\n"
	}
	if _, err := e.w.WriteString(end); err != nil {
		return err
	}
	return e.w.Flush()
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
	if json.Valid(data) {
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
	if utf8.Valid(raw) {
		k, _ := unquote(raw)
		return k
	}
	var k string
	_ = json.Unmarshal(raw, &k)
	return k
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
		if d.seen[k] {
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
	seen    map[string]bool
	hasRole bool
}

func newMessageDecoder(m *HistoryMessage, i int) *messageDecoder {
	m.OmitTimestamp = true
	return &messageDecoder{m: m, i: i, seen: map[string]bool{}}
}

// field takes key k's value raw (valid JSON).
func (d *messageDecoder) field(k string, raw json.RawMessage) error {
	m, i := d.m, d.i
	if d.seen[k] {
		return &FieldError{Index: i, Field: k, Reason: "duplicate key"}
	}
	d.seen[k] = true
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

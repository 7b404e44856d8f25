package models

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// The history message's JSON out: the peer's key order, Python's escapes
// and timestamps, streamed without holding a history.

// MarshalJSON writes the message in the Python service's key order. (encoding/json's
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

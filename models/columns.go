package models

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"strings"
)

// The column types below carry their own driver.Valuer / sql.Scanner so that
// one model works on PostgreSQL (JSONB, TEXT[]) and on SQLite (TEXT). Values
// are produced as strings because bun inlines them as SQL literals, and a
// quoted literal is what both databases cast to the column type.

// JSONMap is a JSONB object column. Numbers are decoded as json.Number so that
// integers larger than 2^53 survive a round trip. A nil map is written as {}.
type JSONMap map[string]any

// Value implements driver.Valuer.
func (m JSONMap) Value() (driver.Value, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(map[string]any(m))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (m *JSONMap) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil || b == nil {
		*m = nil
		return err
	}
	var out map[string]any
	if err := decodeNumber(b, &out); err != nil {
		return fmt.Errorf("scan JSON object: %w", err)
	}
	*m = out
	return nil
}

// JSONList is a JSONB array column. A nil list is written as [].
type JSONList []any

// Value implements driver.Valuer.
func (l JSONList) Value() (driver.Value, error) {
	if l == nil {
		return "[]", nil
	}
	b, err := json.Marshal([]any(l))
	if err != nil {
		return nil, err
	}
	return string(b), nil
}

// Scan implements sql.Scanner.
func (l *JSONList) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil || b == nil {
		*l = nil
		return err
	}
	var out []any
	if err := decodeNumber(b, &out); err != nil {
		return fmt.Errorf("scan JSON array: %w", err)
	}
	*l = out
	return nil
}

// NullJSON is a nullable JSONB column kept as raw bytes; nil is SQL NULL.
// messages.tool_calls uses it: the Python service writes NULL or {"items": [...]}.
type NullJSON json.RawMessage

// Value implements driver.Valuer.
func (j NullJSON) Value() (driver.Value, error) {
	if j == nil {
		return nil, nil
	}
	return string(j), nil
}

// Scan implements sql.Scanner.
func (j *NullJSON) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil || b == nil {
		*j = nil
		return err
	}
	*j = NullJSON(bytes.Clone(b))
	return nil
}

// MarshalJSON writes the raw value, or null.
func (j NullJSON) MarshalJSON() ([]byte, error) {
	if j == nil {
		return []byte("null"), nil
	}
	return j, nil
}

// UnmarshalJSON keeps the raw value; null becomes nil.
func (j *NullJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*j = nil
		return nil
	}
	*j = NullJSON(bytes.Clone(b))
	return nil
}

// StringArray is a TEXT[] column. It is written as a PostgreSQL array literal
// ({a,"b c"}), which PostgreSQL casts to TEXT[] and SQLite keeps as text.
type StringArray []string

// Value implements driver.Valuer.
func (a StringArray) Value() (driver.Value, error) {
	var sb strings.Builder
	sb.WriteByte('{')
	for i, s := range a {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteRune(r)
		}
		sb.WriteByte('"')
	}
	sb.WriteByte('}')
	return sb.String(), nil
}

// Scan implements sql.Scanner for the text form of a one-dimensional array.
func (a *StringArray) Scan(src any) error {
	b, err := scanBytes(src)
	if err != nil || b == nil {
		*a = nil
		return err
	}
	out, err := parsePGArray(string(b))
	if err != nil {
		return err
	}
	*a = out
	return nil
}

func parsePGArray(s string) ([]string, error) {
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("scan text[]: not an array literal: %q", s)
	}
	body := s[1 : len(s)-1]
	out := []string{}
	if body == "" {
		return out, nil
	}
	var cur strings.Builder
	quoted, inQuotes, escaped := false, false, false
	flush := func() {
		v := cur.String()
		if !quoted && strings.EqualFold(v, "NULL") {
			v = ""
		}
		out = append(out, v)
		cur.Reset()
		quoted = false
	}
	for _, r := range body {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '"':
			inQuotes = !inQuotes
			quoted = true
		case r == ',' && !inQuotes:
			flush()
		default:
			cur.WriteRune(r)
		}
	}
	if inQuotes || escaped {
		return nil, fmt.Errorf("scan text[]: unterminated element in %q", s)
	}
	flush()
	return out, nil
}

func scanBytes(src any) ([]byte, error) {
	switch v := src.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("scan: unsupported source type %T", src)
	}
}

func decodeNumber(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec.Decode(v)
}

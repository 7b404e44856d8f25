package convert

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/remstore/remstore/internal/jsonvalid"
)

// Reading a stored source fast (issue 45, item 1). A source is a JSON
// object of a few known keys whose values are objects of raw values;
// json.Unmarshal into maps of json.RawMessage reflected over each and
// copied every value, a third of a pydantic-ai load. decodeSource checks
// the document once (jsonvalid.Valid, json.Valid in a quarter of the
// time) and then only splits it, each value a
// slice of the document; anything it does not read as json.Unmarshal
// would (a key with an escape, a key matched only by case, a value of
// another type) goes to json.Unmarshal. FuzzDecodeSource holds the two
// equal.

// decodeSource is json.Unmarshal(b, &src).
func decodeSource(b []byte, src *source) error {
	if !jsonvalid.Valid(b) {
		return json.Unmarshal(b, src) // its error
	}
	if fast(b, src) {
		return nil
	}
	*src = source{}
	return json.Unmarshal(b, src)
}

// fast splits a valid document into src; false when it cannot say what
// json.Unmarshal would.
func fast(b []byte, src *source) bool {
	var arr [8]rawField
	fields, ok := splitObjectInto(arr[:0], b)
	if !ok {
		return false
	}
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.key] { // json.Unmarshal would merge into the first's map
			return false
		}
		seen[f.key] = true
		switch f.key {
		case "message":
			if isNull(f.val) {
				src.Message = nil
				continue
			}
			m, ok := rawObject(f.val)
			if !ok {
				return false
			}
			src.Message = m
		case "parts":
			if isNull(f.val) {
				src.Parts = nil
				continue
			}
			items, ok := splitArray(f.val)
			if !ok {
				return false
			}
			parts := make([]map[string]json.RawMessage, len(items))
			for i, it := range items {
				if isNull(it) {
					continue
				}
				if parts[i], ok = rawObject(it); !ok {
					return false
				}
			}
			src.Parts = parts
		case "from_row":
			if src.FromRow, ok = intList(f.val); !ok {
				return false
			}
		case "lens":
			if src.Lens, ok = intList(f.val); !ok {
				return false
			}
		default:
			for _, k := range []string{"message", "parts", "from_row", "lens"} {
				if strings.EqualFold(f.key, k) { // json.Unmarshal matches struct fields by case too
					return false
				}
			}
		}
	}
	return true
}

type rawField struct {
	key string
	val json.RawMessage
}

// intList is json.Unmarshal of a valid value into []int where the value
// is null or a list of small non-negative integers (what a store writes:
// [0], [0,2]); false for any other (json.Unmarshal says then), which
// decoding by reflection cost a twelfth of a pydantic-ai load (issue 57).
func intList(v json.RawMessage) ([]int, bool) {
	if isNull(v) {
		return nil, true
	}
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return nil, false
	}
	out := []int{}
	i := skipSpace(v, 1)
	if v[i] == ']' {
		return out, i == len(v)-1
	}
	for {
		n, d := 0, 0
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9' && d < 9; i, d = i+1, d+1 {
			n = n*10 + int(v[i]-'0')
		}
		if d == 0 || (d > 1 && v[i-d] == '0') {
			return nil, false
		}
		out = append(out, n)
		i = skipSpace(v, i)
		switch {
		case i < len(v)-1 && v[i] == ',':
			i = skipSpace(v, i+1)
		case i == len(v)-1: // at ']'
			return out, true
		default:
			return nil, false
		}
	}
}

// rawObject is a valid object's fields as a map, the last of a repeated
// key winning, as json.Unmarshal into a map makes it.
func rawObject(b []byte) (map[string]json.RawMessage, bool) {
	var arr [12]rawField
	fields, ok := splitObjectInto(arr[:0], b)
	if !ok {
		return nil, false
	}
	m := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		m[f.key] = f.val
	}
	return m, true
}

// knownKeys are the keys of stored sources, interned: a key read is one of
// these strings, not a new one each time.
var knownKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{"message", "parts", "from_row", "lens", "kind", "part_kind", "content", "timestamp", "tool_name",
		"tool_call_id", "args", "id", "metadata", "instructions", "run_id", "model_name", "provider_name", "provider_details",
		"provider_response_id", "provider_url", "finish_reason", "usage", "dynamic_ref", "details", "signature", "state"} {
		m[k] = k
	}
	return m
}()

// splitObjectInto splits a valid JSON object into its fields, appended
// to out; false for another value or a key with an escape.
func splitObjectInto(out []rawField, b []byte) ([]rawField, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, true
	}
	for i < len(b) {
		if b[i] != '"' {
			return nil, false
		}
		end := i + 1
		for end < len(b) && b[end] != '"' {
			if b[end] == '\\' {
				return nil, false
			}
			end++
		}
		key, known := knownKeys[string(b[i+1:end])]
		if !known {
			key = string(b[i+1 : end])
			if !utf8.ValidString(key) { // json.Unmarshal would replace the bad bytes
				return nil, false
			}
		}
		i = skipSpace(b, end+1) // at ':'
		i = skipSpace(b, i+1)
		j := skipValue(b, i)
		out = append(out, rawField{key, json.RawMessage(b[i:j])})
		i = skipSpace(b, j)
		if i < len(b) && b[i] == '}' {
			return out, true
		}
		i = skipSpace(b, i+1) // past ','
	}
	return nil, false
}

// splitArray splits a valid JSON array into its elements; false for
// another value.
func splitArray(b []byte) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	out := make([]json.RawMessage, 0, 4)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, true
	}
	for i < len(b) {
		j := skipValue(b, i)
		out = append(out, json.RawMessage(b[i:j]))
		i = skipSpace(b, j)
		if i < len(b) && b[i] == ']' {
			return out, true
		}
		i = skipSpace(b, i+1)
	}
	return nil, false
}

// skipValue is the index just past the valid JSON value at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		default:
			if depth == 0 { // a number or a literal: up to a delimiter
				for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
					i++
				}
				return i
			}
		}
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func isNull(v json.RawMessage) bool { return string(v) == "null" }

package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// What PostgreSQL's numeric type (and so JSONB) stores: up to 131072 digits
// before the decimal point and 16383 after it. A number beyond either is
// refused by the server (SQLSTATE 22003), so it is refused here first.
const (
	MaxNumberIntDigits  = 131072
	MaxNumberFracDigits = 16383
)

// CheckJSONValue checks a syntactically valid JSON value for what JSON allows
// but the store must not take: a lone UTF-16 surrogate escape (\ud800 without
// its pair; Go's decoder would silently turn it into U+FFFD and PostgreSQL
// refuses it in JSONB), a number JSONB cannot hold, and an object with the
// same key twice (which JSONB would silently reduce to the last). It returns
// "" when the value is fine, else the reason. It does not validate syntax.
func CheckJSONValue(raw []byte) string {
	type frame struct{ keys map[string]bool }
	var stack []frame
	expectKey := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '{':
			stack = append(stack, frame{keys: map[string]bool{}})
			expectKey = true
		case c == '[':
			stack = append(stack, frame{})
			expectKey = false
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectKey = false
		case c == ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1].keys != nil
		case c == ':':
			expectKey = false
		case c == '"':
			end, reason := scanString(raw, i)
			if reason != "" {
				return reason
			}
			if expectKey {
				// Keys compare decoded, as JSONB compares them: "\u0061" is "a".
				var s string
				if end >= len(raw) || json.Unmarshal(raw[i:end+1], &s) != nil {
					s = string(raw[i:min(end+1, len(raw))])
				}
				f := stack[len(stack)-1]
				if f.keys[s] {
					return fmt.Sprintf("duplicate key %q in a JSON object", truncateRunes(s, 40))
				}
				f.keys[s] = true
				expectKey = false
			}
			i = end
		case c == '-' || (c >= '0' && c <= '9'):
			j := i + 1
			for j < len(raw) && (raw[j] == '.' || raw[j] == 'e' || raw[j] == 'E' || raw[j] == '+' || raw[j] == '-' || (raw[j] >= '0' && raw[j] <= '9')) {
				j++
			}
			if reason := checkNumber(string(raw[i:j])); reason != "" {
				return reason
			}
			i = j - 1
		}
	}
	return ""
}

// scanString walks the string starting at raw[i] == '"', returning the index
// of its closing quote and a reason when it holds a lone surrogate escape.
func scanString(raw []byte, i int) (int, string) {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '"':
			return j, ""
		case '\\':
			if j+1 >= len(raw) {
				return j, ""
			}
			if raw[j+1] != 'u' {
				j++
				continue
			}
			r, ok := hex4(raw, j+2)
			if !ok {
				return j, ""
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF: // high surrogate: a low one must follow
				r2, ok2 := rune(0), false
				if j+7 < len(raw) && raw[j+6] == '\\' && raw[j+7] == 'u' {
					r2, ok2 = hex4(raw, j+8)
				}
				if !ok2 || r2 < 0xDC00 || r2 > 0xDFFF {
					return j, fmt.Sprintf(`lone UTF-16 surrogate \u%04x (not a character; PostgreSQL refuses it)`, r)
				}
				j += 11
			case r >= 0xDC00 && r <= 0xDFFF:
				return j, fmt.Sprintf(`lone UTF-16 surrogate \u%04x (not a character; PostgreSQL refuses it)`, r)
			default:
				j += 5
			}
		}
	}
	return len(raw), ""
}

func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(v), err == nil
}

// checkNumber bounds a JSON number literal by what numeric stores.
func checkNumber(lit string) string {
	mant, expLit := lit, ""
	if k := indexAny(lit, "eE"); k >= 0 {
		mant, expLit = lit[:k], lit[k+1:]
	}
	if mant != "" && mant[0] == '-' {
		mant = mant[1:]
	}
	intPart, frac := mant, ""
	if k := indexAny(mant, "."); k >= 0 {
		intPart, frac = mant[:k], mant[k+1:]
	}
	// Leading zeros of the integer part and trailing zeros of the fraction do
	// not count; a value of zero is always fine.
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if intPart == "" && frac == "" {
		return "" // zero, whatever the exponent
	}
	exp := 0
	if expLit != "" {
		e, err := strconv.Atoi(expLit)
		if err != nil { // an exponent beyond int: certainly out of range
			return fmt.Sprintf("number %s is out of the range PostgreSQL stores", truncateRunes(lit, 24))
		}
		exp = e
	}
	intDigits, fracDigits := len(intPart)+exp, len(frac)-exp
	if intPart == "" { // 0.000123e5: the integer digits start after the leading zeros of the fraction
		lead := 0
		for lead < len(frac) && frac[lead] == '0' {
			lead++
		}
		intDigits = exp - lead
	}
	if intDigits > MaxNumberIntDigits || fracDigits > MaxNumberFracDigits {
		return fmt.Sprintf("number %s is out of the range PostgreSQL stores", truncateRunes(lit, 24))
	}
	return ""
}

func indexAny(s, chars string) int {
	for i := 0; i < len(s); i++ {
		for j := 0; j < len(chars); j++ {
			if s[i] == chars[j] {
				return i
			}
		}
	}
	return -1
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// JSONDepth is how deeply a JSON text nests its objects and arrays
// (strings skipped); it does not validate. The store and the MCP filter
// bound it before anything decodes the text recursively.
func JSONDepth(raw []byte) int {
	depth, maxDepth, inStr, esc := 0, 0, false, false
	for _, c := range raw {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '{' || c == '[':
			depth++
			maxDepth = max(maxDepth, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return maxDepth
}

// SameJSON reports whether a and b are the same JSON value: equal texts, or
// both JSON that decode to the same value whatever the spacing and the
// order of object keys (numbers compared as written). The one rule for
// "the row and its source say the same" (convert.CheckSource, the Agents
// SDK item check).
func SameJSON(a, b string) bool {
	if a == b {
		return true
	}
	norm := func(s string) ([]byte, bool) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil || dec.More() {
			return nil, false
		}
		out, err := json.Marshal(v)
		return out, err == nil
	}
	x, okx := norm(a)
	y, oky := norm(b)
	return okx && oky && bytes.Equal(x, y)
}

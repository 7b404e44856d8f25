package jsonvalid

// maxDepth bounds nesting, as encoding/json's scanner does (10,000).
const maxDepth = 10000

// Valid reports whether b is exactly one JSON value (RFC 8259), white space
// around it allowed: json.Valid's answer for every input (FuzzValid). Like
// json.Valid it does not check the UTF-8 inside strings.
func Valid(b []byte) bool {
	v := validator{b: b}
	i, ok := v.value(v.space(0), 0)
	return ok && v.space(i) == len(b)
}

type validator struct{ b []byte }

func (v *validator) space(i int) int {
	for i < len(v.b) {
		switch v.b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value checks the value at b[i] and returns the index past it.
func (v *validator) value(i, depth int) (int, bool) {
	if i >= len(v.b) {
		return i, false
	}
	switch c := v.b[i]; {
	case c == '{':
		return v.object(i+1, depth+1)
	case c == '[':
		return v.array(i+1, depth+1)
	case c == '"':
		return v.str(i + 1)
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number(i)
	case c == 't':
		return v.literal(i, "true")
	case c == 'f':
		return v.literal(i, "false")
	case c == 'n':
		return v.literal(i, "null")
	}
	return i, false
}

func (v *validator) literal(i int, lit string) (int, bool) {
	if len(v.b)-i < len(lit) || string(v.b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

func (v *validator) object(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = v.space(i)
	if i < len(v.b) && v.b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(v.b) || v.b[i] != '"' {
			return i, false
		}
		var ok bool
		if i, ok = v.str(i + 1); !ok {
			return i, false
		}
		if i = v.space(i); i >= len(v.b) || v.b[i] != ':' {
			return i, false
		}
		if i, ok = v.value(v.space(i+1), depth); !ok {
			return i, false
		}
		if i = v.space(i); i >= len(v.b) {
			return i, false
		}
		switch v.b[i] {
		case '}':
			return i + 1, true
		case ',':
			i = v.space(i + 1)
		default:
			return i, false
		}
	}
}

func (v *validator) array(i, depth int) (int, bool) {
	if depth > maxDepth {
		return i, false
	}
	i = v.space(i)
	if i < len(v.b) && v.b[i] == ']' {
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = v.value(i, depth); !ok {
			return i, false
		}
		if i = v.space(i); i >= len(v.b) {
			return i, false
		}
		switch v.b[i] {
		case ']':
			return i + 1, true
		case ',':
			i = v.space(i + 1)
		default:
			return i, false
		}
	}
}

// str checks a string's rest from just past its opening quote.
func (v *validator) str(i int) (int, bool) {
	for i < len(v.b) {
		switch c := v.b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			if i+1 >= len(v.b) {
				return i, false
			}
			switch v.b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(v.b)-i < 6 || !hex(v.b[i+2]) || !hex(v.b[i+3]) || !hex(v.b[i+4]) || !hex(v.b[i+5]) {
					return i, false
				}
				i += 6
			default:
				return i, false
			}
		default:
			i++
		}
	}
	return i, false
}

func hex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// number checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number(i int) (int, bool) {
	b := v.b
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

package models

import (
	"strings"
	"testing"
)

// The limits are PostgreSQL's (numeric: 131072 digits before the point,
// 16383 after); each boundary below was worked out by hand from them.
func TestCheckJSONValue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string // want: a substring of the reason, "" = fine
	}{
		{`{"a":1,"b":[1,2,{"c":"x"}]}`, ""},
		{`"\ud83d\ude00"`, ""}, // a pair: 😀
		{`"\ud800"`, `lone UTF-16 surrogate \ud800`},
		{`"x\udc00y"`, `lone UTF-16 surrogate \udc00`},
		{`"\ud800\u0041"`, `lone UTF-16 surrogate \ud800`},
		{`{"k":["\\ud800"]}`, ""}, // an escaped backslash, not an escape
		{`{"a":{"b":"\ud800"}}`, "lone"},
		{`{"a":1,"a":2}`, `duplicate key "a"`},
		{`{"a":{"x":1},"b":{"x":2}}`, ""}, // the same key in two objects
		{`[{"x":1},{"x":1}]`, ""},
		{`{"a":{"x":1,"x":1}}`, `duplicate key "x"`},
		{`{"\u0061":1,"a":2}`, `duplicate key "a"`}, // keys compare decoded, as JSONB compares them
		{`1e999999`, "out of the range"},
		{`1e-999999`, "out of the range"},
		{`-1e131071`, ""},                // 131072 integer digits
		{`1e131072`, "out of the range"}, // 131073
		{`1e-16383`, ""},                 // 16383 fraction digits
		{`1e-16384`, "out of the range"}, // 16384
		{`0e99999999999999999999`, ""},   // zero
		{`0.000e-99999`, ""},             // zero
		{`1.5e99999999999999999999`, "out of the range"},
		{`12345678901234567890123456789`, ""},
		{`0.1e131072`, ""}, // 131072 integer digits
		{`0.01e131073`, ""},
		{`0.01e131074`, "out of the range"},
		{`"1e999999"`, ""}, // a string, not a number
	} {
		got := CheckJSONValue([]byte(tc.in))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("CheckJSONValue(%.40s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzCheckJSONValue(f *testing.F) {
	for _, s := range []string{`{"a":[1,"\ud800"]}`, `1e5`, `{"a":1,"a":1}`, `"\\"`, `"\u`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = CheckJSONValue(b) // never panics, on any input
	})
}

// Hand-worked: spacing and key order do not matter; numbers compare as
// written, so two integers past 2^53 stay apart; text that is not JSON is
// the same only when equal.
func TestSameJSON(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{`{"a": 1, "b": [1, 2]}`, `{"b":[1,2],"a":1}`, true},
		{`{"q": "lisbon"}`, `{"q":"porto"}`, false},
		{`9007199254740993`, `9007199254740992`, false},
		{`1.0`, `1`, false},
		{`plain text`, `plain text`, true},
		{`plain text`, `"plain text"`, false},
		{`{"a":1} {"b":2}`, `{"a":1}`, false},
	} {
		if got := SameJSON(c.a, c.b); got != c.want {
			t.Errorf("SameJSON(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

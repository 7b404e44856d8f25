package jsonvalid

import (
	"encoding/json"
	"strings"
	"testing"
)

var cases = []string{
	``, ` `, `null`, `nul`, `nulll`, `true`, `false`, `tru`, `0`, `-0`, `01`, `-`, `1.`, `1.5`, `.5`, `1e5`, `1E+5`, `1e`, `1e-`,
	`-1.5e-7`, `"`, `""`, `"a"`, `"\"`, `"\u00e9"`, `"\u00g9"`, `"\x"`, "\"\t\"", `"é"`, "\"\xff\"", `[]`, `[ ]`, `[1,]`, `[,1]`,
	`[1 2]`, `[1,2]`, `{}`, `{ }`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1}`, `{"a":1 "b":2}`, `{1:2}`, ` {"a" : [ true , null ] } `,
	`{"a":1}x`, `1 2`, `[[[]]]`, `[[[]]`, `{"a":{"b":[{"c":"d"}]}}`, `"\/"`, `"\ud800"`, "\u00a0", `+1`, `NaN`, `Infinity`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
}

func TestValid(t *testing.T) {
	for _, c := range cases {
		if got, want := Valid([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid %v", c, got, want)
		}
	}
}

// FuzzValid holds Valid to json.Valid on every input.
func FuzzValid(f *testing.F) {
	for _, c := range cases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := Valid(b), json.Valid(b); got != want {
			t.Fatalf("Valid(%q) = %v, json.Valid %v", b, got, want)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	doc := []byte(`{"parts": [{"args": {"city": "Paris", "days": 7}, "part_kind": "tool-call", "tool_name": "weather", "tool_call_id": "call_0000"}], "message": {"kind": "response", "usage": {"details": {}, "input_tokens": 812, "output_tokens": 96}, "timestamp": "2026-11-24T05:48:04.500000Z", "model_name": "gpt-4o-2024-08-06"}, "from_row": [0]}`)
	for _, v := range []struct {
		name string
		fn   func([]byte) bool
	}{{"jsonvalid", Valid}, {"encoding-json", json.Valid}} {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !v.fn(doc) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

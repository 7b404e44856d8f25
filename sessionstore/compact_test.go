package sessionstore

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzCompactJSONText: for any valid JSON, the bytes json.Compact gives.
func FuzzCompactJSONText(f *testing.F) {
	for _, s := range []string{`{"a": 1, "b": [1, 2, {"c": "x y"}]}`, `"a\\" b"`, `[ "\\\\", " ", "\u00e9" ]`, "{\n\t\"k\" :\r null }",
		`{"parts": [{"content": "Here: a, b", "part_kind": "text"}], "from_row": [0]}`, `{"s": "tab\there \"q\" \\\\ end"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil {
			t.Fatal(err)
		}
		if got := compactJSONText(b); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("compactJSONText(%q) = %q, json.Compact %q", b, got, want.Bytes())
		}
	})
}

// BenchmarkCompactRaw: a pydantic-ai source as jsonb prints it, compacted
// by json.Compact and by compactJSONText.
func BenchmarkCompactRaw(b *testing.B) {
	src := []byte(`{"parts": [{"content": "` + strings.Repeat("Here is the plan, with: commas and colons. ", 30) +
		`", "part_kind": "text", "id": null}], "from_row": [0], "message": {"kind": "response", "usage": {"input_tokens": 120, "output_tokens": 400}, ` +
		`"model_name": "gpt-x", "timestamp": "2026-01-02T03:04:05Z", "finish_reason": "stop", "provider_details": {"a": [1, 2, {"b": "c \"quoted\" d"}]}}}`)
	b.Run("encoding_json", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			_ = json.Compact(&out, src)
		}
	})
	b.Run("compactJSONText", func(b *testing.B) {
		for b.Loop() {
			_ = compactJSONText(src)
		}
	})
}

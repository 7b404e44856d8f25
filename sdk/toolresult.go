package sdk

import (
	"bytes"
	"encoding/json"
)

// A tool result reaches every model in the words pydantic-ai gives it, so
// that a turn run in Go and a turn run in Python send one session's results
// alike. pydantic-ai reads a stored result as JSON (text that is not JSON as
// {"raw": text}, empty text as {}); measured with pydantic-ai 1.42 and 2.68
// (interop/test_sdk_oracle.py), it then sends:
//
//   - to a model that takes text (OpenAI, Anthropic): a JSON string as the
//     string it holds, any other JSON value as its compact JSON text;
//   - to a model that takes an object (Gemini): a JSON object as it is, any
//     other value as {"return_value": value}.
//
// ResultText and ResultObject are those two rules. Text that is not JSON is
// sent as it is by ResultText: a Go agent keeping its history in memory
// sends its tool's text so, and the adapters send what it sends.

// ResultText is the text a model is sent for a stored tool result: a JSON
// string (what a pydantic-ai tool that returns text leaves in the store, e.g.
// "{\"celsius\": 21}" with its quotes) as the string it holds, anything
// else as stored.
func ResultText(content string) string {
	t := bytes.TrimSpace([]byte(content))
	if len(t) < 2 || t[0] != '"' {
		return content
	}
	var s string
	if json.Unmarshal(t, &s) != nil {
		return content
	}
	return s
}

// ResultObject is the object a model that takes tool results as objects is
// sent for a stored tool result: a JSON object as it is (numbers exact),
// empty content as {}, text that is not JSON as {"raw": text}, and any
// other JSON value v as {"return_value": v}, as pydantic-ai sends them.
func ResultObject(content string) map[string]any {
	if content == "" {
		return map[string]any{}
	}
	t := []byte(content)
	if !json.Valid(t) { // white space only, too
		return map[string]any{"raw": content}
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var v any
	_ = dec.Decode(&v) // valid JSON: decodes
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"return_value": v}
}

package sdk_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/remstore/remstore/sdk"
)

// What pydantic-ai 1.42 and 2.68 send for a stored tool result, read off
// their requests (OpenAI's tool message, Anthropic's tool_result text,
// Gemini's functionResponse.response) for a history loaded from remstore:
// the stored text, what pydantic-ai sends as text, what it sends as an
// object. Where the two versions differ (null), 1.42's, the Python
// service's. Text that is not JSON is sent as stored by ResultText (the Go
// agent's own words; pydantic-ai reads it as {"raw": text}).
var pydanticAISends = []struct{ stored, text, object string }{
	{`"abc"`, `abc`, `{"return_value":"abc"}`},
	{`"{\"celsius\": 21}"`, `{"celsius": 21}`, `{"return_value":"{\"celsius\": 21}"}`},
	{`""`, ``, `{"return_value":""}`},
	{`"2024-01-01T00:00:00Z"`, `2024-01-01T00:00:00Z`, `{"return_value":"2024-01-01T00:00:00Z"}`},
	{`{"a":1,"b":"é"}`, `{"a":1,"b":"é"}`, `{"a":1,"b":"é"}`},
	{`[1,"x",{"k":2}]`, `[1,"x",{"k":2}]`, `{"return_value":[1,"x",{"k":2}]}`},
	{`42`, `42`, `{"return_value":42}`},
	{`1.5`, `1.5`, `{"return_value":1.5}`},
	{`true`, `true`, `{"return_value":true}`},
	{`null`, `null`, `{"return_value":null}`},
	{`{}`, `{}`, `{}`},
	{``, ``, `{}`},
	{`   `, `   `, `{"raw":"   "}`},
	{`plain text`, `plain text`, `{"raw":"plain text"}`},
	{`{"city":"Lisbon","celsius":21,"n":12345678901234567890}`, `{"city":"Lisbon","celsius":21,"n":12345678901234567890}`, `{"city":"Lisbon","celsius":21,"n":12345678901234567890}`},
}

func TestToolResultsAsPydanticAISendsThem(t *testing.T) {
	for _, c := range pydanticAISends {
		if got := sdk.ResultText(c.stored); got != c.text {
			t.Errorf("ResultText(%s) = %q, pydantic-ai sends %q", c.stored, got, c.text)
		}
		// Key order aside: a genai response is a Go map.
		b, err := json.Marshal(sdk.ResultObject(c.stored))
		if err != nil || !sameJSON(b, []byte(c.object)) {
			t.Errorf("ResultObject(%s) = %s (%v), pydantic-ai sends %s", c.stored, b, err, c.object)
		}
	}
}

// sameJSON compares two JSON texts as values, numbers by their text.
func sameJSON(a, b []byte) bool {
	x, y := decodeNumbers(a), decodeNumbers(b)
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return x != nil && string(xb) == string(yb)
}

func decodeNumbers(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

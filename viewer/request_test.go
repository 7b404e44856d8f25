package viewer

import (
	"encoding/json"
	"testing"
)

// Each model API's request as sdk.Transport records it: the system prompt
// it carried and the messages it sent, counted in that API's words
// (hand-read from each body).
func TestRequestFacts(t *testing.T) {
	for _, c := range []struct {
		name, body, system, sent string
	}{
		{"chat completions", `{"model":"gpt","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}],"tools":[]}`, "Be brief.", "2 messages"},
		{"chat, developer parts", `{"messages":[{"role":"developer","content":[{"type":"text","text":"Be"},{"type":"text","text":"brief."}]}]}`, "Be\nbrief.", "1 message"},
		{"chat without one", `{"messages":[{"role":"user","content":"hi"}]}`, "", "1 message"},
		{"responses", `{"model":"gpt","instructions":"Be brief.","input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"c","output":"{}"}]}`, "Be brief.", "2 input items"},
		{"anthropic", `{"model":"claude","max_tokens":64,"system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":"hi"}]}`, "Be brief.", "1 message"},
		{"genai", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"text":"hello"}]},{"role":"user","parts":[{"text":"?"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]}}`, "Be brief.", "3 contents"},
		{"pydantic-ai", `[{"kind":"request","parts":[{"part_kind":"system-prompt","content":"Be brief."},{"part_kind":"user-prompt","content":"hi"}]},{"kind":"response","parts":[]}]`, "Be brief.", "2 pydantic-ai messages"},
		{"not a request", `"text"`, "", ""},
	} {
		var v any
		if err := json.Unmarshal([]byte(c.body), &v); err != nil {
			t.Fatal(err)
		}
		if system, sent := requestFacts(v); system != c.system || sent != c.sent {
			t.Errorf("%s: system %q, sent %q; want %q, %q", c.name, system, sent, c.system, c.sent)
		}
	}
}

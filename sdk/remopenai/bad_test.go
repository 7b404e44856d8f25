package remopenai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remopenai"
)

// What the history cannot carry is an error naming the part, never dropped.
func TestRefusesWhatItCannotKeep(t *testing.T) {
	for name, c := range map[string]struct{ body, field string }{
		"arguments not JSON": {`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{city: 1"}}]}}]}`,
			"choices[0].message.tool_calls[0].arguments"},
		"no call id": {`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`,
			"choices[0].message.tool_calls[0].id"},
		"custom tool call": {`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"f","input":"x"}}]}}]}`,
			"choices[0].message.tool_calls[0].type"},
		"refusal":   {`{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I cannot."}}]}`, "choices[0].message.refusal"},
		"no choice": {`{"choices":[]}`, "choices"},
	} {
		var comp openai.ChatCompletion
		if err := json.Unmarshal([]byte(c.body), &comp); err != nil {
			t.Fatal(err)
		}
		_, err := remopenai.FromCompletion(&comp)
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != c.field {
			t.Errorf("%s: %v, want field %s", name, err, c.field)
		}
	}
	var r responses.Response
	if err := json.Unmarshal([]byte(`{"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]},{"type":"web_search_call","id":"ws","status":"completed"}]}`), &r); err != nil {
		t.Fatal(err)
	}
	if _, err := remopenai.FromResponse(&r); err == nil || !strings.Contains(err.Error(), "output[1].type") {
		t.Errorf("a built-in tool's item: %v", err)
	}
	if _, err := remopenai.Messages([]models.HistoryMessage{{Role: "bot", Content: "x"}}, remopenai.Options{}); err == nil || !strings.Contains(err.Error(), "message 0") {
		t.Errorf("an unknown role: %v", err)
	}
}

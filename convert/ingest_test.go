package convert_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

func generic(t testing.TB, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// TestIngestRoundTrip: what pydantic-ai wrote, decoded into history messages
// and converted back, is what pydantic-ai wrote, part for part and field for
// field (compared as JSON values).
func TestIngestRoundTrip(t *testing.T) {
	for name, in := range convert.PydanticFixtures(t) {
		t.Run(name, func(t *testing.T) {
			hist := decodedThroughJSON(t, in)
			out := convert.Marshal(convert.Convert(hist, convert.Options{}))
			if want, have := generic(t, in), generic(t, out); !reflect.DeepEqual(want, have) {
				t.Fatalf("round trip differs\nwant %s\nhave %s", in, out)
			}
		})
	}
}

// TestIngestRows checks the rows the peer sees, worked out by hand from
// fixtures/pydantic-ai/2-tools.json.
func TestIngestRows(t *testing.T) {
	in, err := convert.DecodePydanticAI(bytes.NewReader(convert.PydanticFixtures(t)["2-tools.json"]))
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ role, content, callID, name, args string }
	var got []row
	for _, m := range in.Messages {
		got = append(got, row{string(m.Role), m.Content, m.ToolCallID, m.ToolName, string(m.ToolArguments)})
	}
	want := []row{
		{"system", "You are a weather bot.", "", "", ""},
		{"user", "Weather in Paris and Rome?", "", "", ""},
		{"assistant", "", "", "", ""},
		{"tool", `{"city":"Paris","celsius":20}`, "c0", "weather", `{"city":"Paris"}`},
		{"tool", `{"city":"Rome","celsius":25}`, "c1", "weather", `{"city":"Rome"}`},
		{"assistant", "", "", "", ""},
	}
	if !reflect.DeepEqual(got[:len(want)], want) {
		t.Fatalf("rows\nwant %q\nhave %q", want, got[:len(want)])
	}
	last := in.Messages[len(in.Messages)-1]
	if last.Role != models.RoleAssistant || last.Content != "Paris is 20 °C, Rome <b>25</b> & dry.\n\n日本語も👨‍👩‍👧 ok" {
		t.Fatalf("last row %q %q", last.Role, last.Content)
	}
	if calls := in.Messages[2].ToolCalls; len(calls) != 2 || calls[1].Arguments != `{"city": "Rome"}` || calls[1].Name != "weather" || calls[0].ID != "c0" {
		t.Fatalf("tool_calls of the first answer: %+v", calls)
	}
	if u, ok := extra(in.Messages[2], "usage"); !ok || !strings.Contains(u, `"input_tokens"`) {
		t.Fatalf("usage: %s", u)
	}
}

func extra(m models.HistoryMessage, key string) (string, bool) {
	for _, f := range m.Extra {
		if f.Key == key {
			return string(f.Value), true
		}
	}
	return "", false
}

// TestIngestCutAnswer: a long answer cut on load comes back as one text part
// holding the cut (with its REM LOOKUP hint); everything else is unchanged.
func TestIngestCutAnswer(t *testing.T) {
	in, err := convert.DecodePydanticAI(bytes.NewReader(convert.PydanticFixtures(t)["2-tools.json"]))
	if err != nil {
		t.Fatal(err)
	}
	comp, _ := compressor.New(5)
	hist := make([]models.HistoryMessage, len(in.Messages))
	cut := -1
	for i, m := range in.Messages {
		hist[i] = m
		if comp.ShouldCompressOnLoad(m) && strings.Contains(m.Content, "Paris is") {
			if hist[i], err = comp.Compress(m, "session-x-msg-1"); err != nil {
				t.Fatal(err)
			}
			cut = i
		}
	}
	if cut < 0 {
		t.Fatal("no answer long enough to cut")
	}
	var msgs []map[string]any
	if err := json.Unmarshal(convert.Marshal(convert.Convert(hist, convert.Options{})), &msgs); err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]["parts"].([]any)
	if len(last) != 1 {
		t.Fatalf("cut answer parts: %v", last)
	}
	text := last[0].(map[string]any)
	if text["part_kind"] != "text" || text["content"] != hist[cut].Content || !strings.Contains(hist[cut].Content, "REM LOOKUP session-x-msg-1") {
		t.Fatalf("cut part %v", text)
	}
}

// TestIngestRefuses: bad pydantic-ai input is refused with an error naming
// the message, the part and its kind, before anything could be stored.
func TestIngestRefuses(t *testing.T) {
	req := func(parts string) string { return `[{"kind":"request","parts":[` + parts + `]}]` }
	cases := []struct{ name, in, want string }{
		{"not an array", `{}`, "expected a JSON array"},
		{"malformed", `[{"kind":`, "malformed JSON"},
		{"trailing", `[] []`, "trailing data"},
		{"not an object", `[1]`, "message 0: expected a JSON object"},
		{"no kind", `[{"parts":[]}]`, `message 0: field "kind"`},
		{"parts not a list", `[{"kind":"request","parts":{}}]`, `field "parts"`},
		{"unknown kind", req(`{"part_kind":"telepathy","content":"x"}`), `message 0: field "parts[0]": unknown request part kind "telepathy"`},
		{"response kind in request", req(`{"part_kind":"text","content":"x"}`), `unknown request part kind "text"`},
		{"no part kind", req(`{"content":"x"}`), `field "parts[0].part_kind"`},
		{"return without call id", req(`{"part_kind":"user-prompt","content":"a"},{"part_kind":"tool-return","tool_name":"t","content":1}`),
			`message 0: field "parts[1].tool_call_id": tool-return part: missing or empty`},
		{"return with empty call id", req(`{"part_kind":"tool-return","tool_name":"t","tool_call_id":"","content":1}`), `tool_call_id`},
		{"return without name", req(`{"part_kind":"tool-return","tool_call_id":"c","content":1}`), `field "parts[0].tool_name": tool-return part`},
		{"content not a string", req(`{"part_kind":"system-prompt","content":5}`), `field "parts[0].content": system-prompt part: must be a string`},
		{"user content number", req(`{"part_kind":"user-prompt","content":5}`), `user-prompt part: must be a string or a list`},
		{"bad timestamp", req(`{"part_kind":"user-prompt","content":"a","timestamp":"yesterday"}`), `field "parts[0].timestamp"`},
		{"text not a string", `[{"kind":"response","parts":[{"part_kind":"text","content":null}]}]`, `field "parts[0].content": text part`},
		{"call args a list", `[{"kind":"response","parts":[{"part_kind":"tool-call","tool_name":"t","tool_call_id":"c","args":[1]}]}]`, `field "parts[0].args"`},
		{"call without id", `[{"kind":"response","parts":[{"part_kind":"tool-call","tool_name":"t","args":{}}]}]`, `tool-call part: missing or empty`},
		{"lone surrogate", req(`{"part_kind":"user-prompt","content":"\ud800"}`), "message 0"},
		{"duplicate key", req(`{"part_kind":"user-prompt","content":"a","content":"b"}`), "duplicate key"},
		{"invalid UTF-8", "[{\"kind\":\"request\",\"parts\":[{\"part_kind\":\"user-prompt\",\"content\":\"\xff\"}]}]", "invalid UTF-8"},
		{"second message bad", `[{"kind":"request","parts":[]},{"kind":"answer","parts":[]}]`, `message 1: field "kind"`},
		{"too many messages", "[" + strings.Repeat(`{"kind":"request","parts":[{"part_kind":"user-prompt","content":"x"}]},`, convert.MaxPydanticAIMessages) +
			`{"kind":"request","parts":[]}]`, `field "messages": more than 10000 pydantic-ai messages`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := convert.DecodePydanticAI(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("want an error containing %q, got %v", c.want, err)
			}
			if _, ok := models.AsFieldError(err); !ok {
				t.Fatalf("not a FieldError: %T", err)
			}
		})
	}
}

// TestIngestLocate: an error a store returns about a row names the
// pydantic-ai message and part the row came from.
func TestIngestLocate(t *testing.T) {
	in, err := convert.DecodePydanticAI(strings.NewReader(`[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"a"}]},
		{"kind":"request","parts":[{"part_kind":"system-prompt","content":"s"},{"part_kind":"user-prompt","content":"b"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := in.Locate(&models.FieldError{Index: 2, Field: "content", Reason: "contains a NUL byte"}).Error()
	if want := `message 1: field "parts[1].content": user-prompt part: contains a NUL byte`; got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// FuzzDecodePydanticAI: no input panics; what is accepted converts to JSON
// that, ingested again, gives the same rows (the rebuild is faithful to what
// the ingest kept).
func FuzzDecodePydanticAI(f *testing.F) {
	for _, b := range convert.PydanticFixtures(f) {
		f.Add(b)
	}
	f.Add([]byte(`[{"kind":"response","parts":[{"part_kind":"text","content":"a"},{"part_kind":"text","content":"b"}]}]`))
	f.Add([]byte(`[{"kind":"request","parts":[{"part_kind":"instruction-delta","x":1}]}]`))
	f.Add([]byte(`[{"kind":"request","parts":[{"part_kind":"retry-prompt","tool_call_id":"c","content":[{"msg":"x"}]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := convert.DecodePydanticAI(bytes.NewReader(data))
		if err != nil {
			if _, ok := models.AsFieldError(err); !ok {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		for i, m := range in.Messages {
			if r := convert.CheckSource(m); r != "" {
				t.Fatalf("row %d disagrees with its own source: %s", i, r)
			}
		}
		out := convert.Marshal(convert.Convert(in.Messages, convert.Options{}))
		if !json.Valid(out) {
			t.Fatalf("invalid output %s", out)
		}
		again, err := convert.DecodePydanticAI(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("output refused: %v\n%s", err, out)
		}
		a, _ := json.Marshal(rowsOf(in.Messages))
		b, _ := json.Marshal(rowsOf(again.Messages))
		if !reflect.DeepEqual(generic(t, a), generic(t, b)) {
			t.Fatalf("rows differ after a rebuild\n%s\n%s", a, b)
		}
	})
}

// rowsOf is what a row holds of each message, sources decoded so that key
// order does not matter.
func rowsOf(msgs []models.HistoryMessage) []any {
	out := make([]any, len(msgs))
	for i, m := range msgs {
		r := map[string]any{"role": m.Role, "content": m.Content, "tool_call_id": m.ToolCallID, "tool_name": m.ToolName,
			"tool_arguments": string(m.ToolArguments), "timestamp": m.Timestamp}
		for _, f := range m.Extra {
			var v any
			if err := json.Unmarshal(f.Value, &v); err != nil {
				v = "undecodable: " + string(f.Value) // compared as such
			}
			r[f.Key] = v
		}
		out[i] = r
	}
	return out
}

// A system prompt given on load replaces the one stored with pydantic-ai
// messages: the model gets one, the one given; what rode with the stored
// one stays.
func TestSystemPromptReplacesStoredOne(t *testing.T) {
	in := `[{"kind":"request","parts":[{"part_kind":"system-prompt","content":"stored prompt","timestamp":"2025-01-01T00:00:00Z"},` +
		`{"part_kind":"user-prompt","content":"hi","timestamp":"2025-01-01T00:00:00Z"}]},` +
		`{"kind":"response","parts":[{"part_kind":"text","content":"hello"}],"timestamp":"2025-01-01T00:00:01Z"},` +
		`{"kind":"request","parts":[{"part_kind":"system-prompt","content":"only a prompt","timestamp":"2025-01-01T00:00:02Z"}]}]`
	got, err := convert.DecodePydanticAI(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	out := string(convert.Marshal(convert.Convert(got.Messages, convert.Options{SystemPrompt: "given prompt"})))
	if strings.Count(out, `"system-prompt"`) != 1 || !strings.Contains(out, `"given prompt"`) || strings.Contains(out, "stored prompt") ||
		strings.Contains(out, "only a prompt") || !strings.Contains(out, `"hi"`) || !strings.Contains(out, `"hello"`) || strings.Count(out, `"kind":"request"`) != 2 {
		t.Fatalf("one system prompt, the given one, expected:\n%s", out)
	}
	// Without one given, the stored prompts come back as they were.
	if out := string(convert.Marshal(convert.Convert(got.Messages, convert.Options{}))); strings.Count(out, `"system-prompt"`) != 2 {
		t.Fatalf("stored prompts: %s", out)
	}
}

// pydantic-ai 2.x's retry feedback is a user row with its text (a plain
// load, search and the Python service see it), and comes back part for part.
func TestRetryFeedbackIsAUserRow(t *testing.T) {
	for _, c := range []struct{ content, text string }{
		{`"the answer must be a number"`, "the answer must be a number"},
		{`[{"type":"int_parsing","loc":["n"],"msg":"bad","input":"x"}]`, `[{"type":"int_parsing","loc":["n"],"msg":"bad","input":"x"}]`},
	} {
		in := `[{"kind":"request","parts":[{"part_kind":"retry-feedback","content":` + c.content +
			`,"retry":{"cause":"model_retry","attempt":1,"max_retries":1},"timestamp":"2025-01-01T00:00:00Z"}]}]`
		got, err := convert.DecodePydanticAI(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) != 1 || got.Messages[0].Role != models.RoleUser || got.Messages[0].Content != c.text {
			t.Fatalf("rows %+v", got.Messages)
		}
		out := convert.Marshal(convert.Convert(got.Messages, convert.Options{}))
		if !reflect.DeepEqual(generic(t, []byte(in)), generic(t, out)) {
			t.Fatalf("round trip\nwant %s\nhave %s", in, out)
		}
	}
}

// decodedThroughJSON decodes what pydantic-ai wrote into history messages
// and carries them through JSON, as a store and a load would.
func decodedThroughJSON(t *testing.T, in []byte) []models.HistoryMessage {
	t.Helper()
	got, err := convert.DecodePydanticAI(bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := models.EncodeHistory(&buf, got.Messages); err != nil {
		t.Fatal(err)
	}
	hist, err := models.DecodeHistory(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return hist
}

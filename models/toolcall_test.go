package models

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseToolCalls(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []ToolCall
		field    string // "" = no error
		reason   string
	}{
		{"flat", `[{"id":"c1","name":"search","arguments":"{\"q\":\"x\"}"}]`, []ToolCall{{"c1", "search", `{"q":"x"}`}}, "", ""},
		{"openai chat form", `[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`, []ToolCall{{"c1", "f", "{}"}}, "", ""},
		{"arguments as an object", `[{"id":"c1","name":"f","arguments":{ "a" : [1, 2] }}]`, []ToolCall{{"c1", "f", `{"a":[1,2]}`}}, "", ""},
		{"no arguments", `[{"id":"c1","name":"f"},{"id":"c2","name":"g","arguments":null}]`, []ToolCall{{"c1", "f", ""}, {"c2", "g", ""}}, "", ""},
		{"null list", `null`, nil, "", ""},
		{"empty list", `[]`, []ToolCall{}, "", ""},
		{"not a list", `{"id":"c1"}`, nil, "tool_calls", "must be a list"},
		{"item not an object", `["c1"]`, nil, "tool_calls", "must be a list"},
		{"unknown key", `[{"id":"c1","name":"f","argumnets":"{}"}]`, nil, "tool_calls[0].argumnets", `did you mean "arguments"?`},
		{"no id", `[{"name":"f"}]`, nil, "tool_calls[0].id", "missing or empty"},
		{"no name", `[{"id":"c1","name":"f"},{"id":"c2","function":{"arguments":"{}"}}]`, nil, "tool_calls[1].name", "missing or empty"},
		{"arguments not JSON", `[{"id":"c1","name":"f","arguments":"{q: 1"}]`, nil, "tool_calls[0].arguments", "not valid JSON"},
		{"arguments a number", `[{"id":"c1","name":"f","arguments":3}]`, nil, "tool_calls[0].arguments", "must be a JSON string"},
		{"nested arguments not JSON", `[{"id":"c1","type":"function","function":{"name":"f","arguments":"nope"}}]`, nil, "tool_calls[0].arguments", "not valid JSON"},
		{"type not function", `[{"id":"c1","type":"web_search","name":"f"}]`, nil, "tool_calls[0].type", `must be "function"`},
		{"both forms", `[{"id":"c1","name":"f","function":{"name":"g"}}]`, nil, "tool_calls[0].name", "both"},
		{"arguments both ways", `[{"id":"c1","arguments":"{}","function":{"name":"g","arguments":"{}"}}]`, nil, "tool_calls[0].arguments", "both"},
		{"key inside function", `[{"id":"c1","function":{"name":"g","strict":true}}]`, nil, "tool_calls[0].function.strict", "not a key"},
		{"id a number", `[{"id":1,"name":"f"}]`, nil, "tool_calls[0].id", "must be a string"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseToolCalls([]byte(c.in))
			if c.field == "" {
				if err != nil || !reflect.DeepEqual(got, c.want) {
					t.Fatalf("got %+v, %v; want %+v", got, err, c.want)
				}
				return
			}
			fe, ok := AsFieldError(err)
			if !ok || fe.Field != c.field || !strings.Contains(fe.Reason, c.reason) {
				t.Fatalf("error %v; want field %q with %q", err, c.field, c.reason)
			}
		})
	}
}

// The decoder reads tool_calls into the typed field and the encoder writes
// them back flat: a history survives a round trip, and a bad item is named
// with its message.
func TestHistoryToolCallsRoundTrip(t *testing.T) {
	in := `[{"role":"assistant","content":"","timestamp":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}]`
	h, err := DecodeHistory([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if want := []ToolCall{{"c1", "f", `{"a":1}`}}; !reflect.DeepEqual(h[0].ToolCalls, want) {
		t.Fatalf("decoded %+v", h[0].ToolCalls)
	}
	out, _ := json.Marshal(h[0])
	want := `{"role":"assistant","content":"","timestamp":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{\"a\":1}"}]}`
	if string(out) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", out, want)
	}
	again, err := DecodeHistory(append(append([]byte("["), out...), ']'))
	if err != nil || !reflect.DeepEqual(again[0].ToolCalls, h[0].ToolCalls) {
		t.Fatalf("second round: %+v %v", again, err)
	}
	_, err = DecodeHistory([]byte(`[{"role":"user","content":"x"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":"{"}]}]`))
	if fe, ok := AsFieldError(err); !ok || fe.Index != 1 || fe.Field != "tool_calls[0].arguments" {
		t.Fatalf("bad call: %v", err)
	}
}

func TestArgumentsObject(t *testing.T) {
	for in, want := range map[string]string{
		"": "{}", `{ "a": 1 }`: `{"a":1}`, `"{\"a\":1}"`: `{"a":1}`, `[1]`: "", `3`: "", `"x"`: "",
	} {
		got, ok := ToolCall{Arguments: in}.ArgumentsObject()
		if string(got) != want || ok != (want != "") {
			t.Errorf("%q: %s %v, want %q", in, got, ok, want)
		}
	}
}

// FuzzParseToolCalls: never panics; what it accepts passes Check and comes
// back the same through AppendToolCalls.
func FuzzParseToolCalls(f *testing.F) {
	for _, s := range []string{`[{"id":"c1","name":"f","arguments":"{}"}]`, `[{"id":"c1","type":"function","function":{"name":"f","arguments":"[1]"}}]`,
		`[{"id":"c","name":"n","arguments":{"x":"\u00e9"}}]`, `[]`, `null`, `[{"id":"","name":""}]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, err := ParseToolCalls([]byte(s))
		if err != nil {
			if _, ok := AsFieldError(err); !ok {
				t.Fatalf("not a FieldError: %v", err)
			}
			return
		}
		for _, c := range calls {
			if err := c.Check(); err != nil {
				t.Fatalf("accepted %+v: %v", c, err)
			}
		}
		again, err := ParseToolCalls(AppendToolCalls(nil, calls))
		if err != nil || len(again) != len(calls) || (len(calls) > 0 && !reflect.DeepEqual(again, calls)) {
			t.Fatalf("round trip %+v -> %+v %v", calls, again, err)
		}
	})
}

// The flat reader is ParseToolCalls through encoding/json wherever it
// answers: the same calls; and where it does not, ParseToolCalls is that
// path's answer, error and all.
func FuzzParseFlatToolCalls(f *testing.F) {
	for _, s := range []string{`[]`, ` [ ] `, `[{"id":"a","name":"b","arguments":"{}"}]`, `[{"name":"b","id":"a"}]`,
		`[{"id":"a","name":"b","arguments":"{\"q\":\"x\\u00e9\"}"}, {"id":"c","name":"d","arguments":""}]`,
		`[{"id":"a","id":"b","name":"c"}]`, `[{"i\u0064":"a","name":"b"}]`, `[{"id":"a","name":"b","arguments":{"x":1}}]`,
		`[{"id":"a","type":"function","function":{"name":"b","arguments":"{}"}}]`, `[{"id":"a","name":"b"}] x`, `[{"id":"a","name":"b"},]`,
		`[{"id":"a","name":"b","arguments":"not json"}]`, `[{"id":"","name":"b"}]`, `[{"id":"a\tb","name":"b"}]`, "[{\"id\":\"a\tb\",\"name\":\"b\"}]",
		`[{"id":null,"name":"b"}]`, `[{"id":"a","name":"b","extra":1}]`, `[{"id":"a","name":"b"}`, `{"id":"a"}`, `[{"id":"a\"","name":"b"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = bytes.TrimSpace(raw)
		if !utf8.Valid(raw) || len(raw) == 0 || string(raw) == "null" {
			return
		}
		want, werr := parseToolCallsJSON(raw)
		got, ok := parseFlatToolCalls(raw)
		if ok && (werr != nil || !reflect.DeepEqual(got, want)) {
			t.Fatalf("%q: flat %#v, encoding/json %#v (%v)", raw, got, want, werr)
		}
		all, err := ParseToolCalls(raw)
		if fmt.Sprint(err) != fmt.Sprint(werr) || (err == nil && !reflect.DeepEqual(all, want)) {
			t.Fatalf("%q: ParseToolCalls %#v (%v), encoding/json %#v (%v)", raw, all, err, want, werr)
		}
	})
}

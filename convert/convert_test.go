package convert

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/models"
)

var update = flag.Bool("update", false, "rewrite the golden files under fixtures/histories/golden")

var fixedNow = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }

// GoldenSystemPrompt is what the golden files and the Python suite pass.
const GoldenSystemPrompt = "You are a test agent."

// The golden outputs; the Python interop suite validates each with both
// pydantic-ai versions and checks the binary produces the same bytes.
func TestGolden(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(fixtures.Path("histories", "*.json"))
	if len(files) < 20 {
		t.Fatalf("only %d history fixtures", len(files))
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := models.DecodeHistory(in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := JSON(h, Options{SystemPrompt: GoldenSystemPrompt, Now: fixedNow})
			if err != nil {
				t.Fatal(err)
			}
			again, _ := JSON(h, Options{SystemPrompt: GoldenSystemPrompt, Now: fixedNow})
			if !bytes.Equal(got, again) {
				t.Fatal("conversion is not deterministic")
			}
			gf := fixtures.Path("histories", "golden", name+".pydantic.json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(gf), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(gf, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(gf)
			if err != nil {
				t.Fatalf("%v (run go test ./convert -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s\n got %s\nwant %s", gf, got, want)
			}
		})
	}
}

// Hand-worked cases for each rule of SPEC §5.
func TestRules(t *testing.T) {
	t.Parallel()
	ts := "2024-01-15T10:30:00+00:00"
	tool := func(content, id, name string, args string) models.HistoryMessage {
		m := models.HistoryMessage{Role: "tool", Content: content, ToolCallID: id, ToolName: name, Timestamp: &ts}
		if args != "" {
			m.ToolArguments = []byte(args)
		}
		return m
	}
	cases := []struct {
		name string
		in   []models.HistoryMessage
		sys  string
		want string
	}{
		{"empty", nil, "", `[]`},
		{"system prompt on empty history", nil, "S",
			`[{"parts":[{"content":"S","timestamp":"2025-01-01T00:00:00Z","part_kind":"system-prompt"}],"kind":"request"}]`},
		{"stored system skipped, user kept", []models.HistoryMessage{{Role: "system", Content: "x", Timestamp: &ts}, {Role: "user", Content: "hi", Timestamp: &ts}}, "",
			`[{"parts":[{"content":"hi","timestamp":"2024-01-15T10:30:00Z","part_kind":"user-prompt"}],"kind":"request"}]`},
		{"empty assistant alone yields nothing", []models.HistoryMessage{{Role: "assistant"}}, "", `[]`},
		{"assistant with two tools, ids and names synthesized",
			[]models.HistoryMessage{{Role: "assistant", Content: "A", Timestamp: &ts}, tool(`{"r":1}`, "", "a.b", ""), tool("oops", "c2", "", `[1]`)}, "",
			`[{"parts":[{"tool_name":"a_b","args":{"r":1},"tool_call_id":"call_1","part_kind":"tool-call"},` +
				`{"tool_name":"unknown_tool","args":{},"tool_call_id":"c2","part_kind":"tool-call"},{"content":"A","part_kind":"text"}],` +
				`"usage":{"input_tokens":0,"cache_write_tokens":0,"cache_read_tokens":0,"output_tokens":0,"input_audio_tokens":0,"cache_audio_read_tokens":0,"output_audio_tokens":0,"details":{}},` +
				`"model_name":"recovered","timestamp":"2024-01-15T10:30:00Z","kind":"response"},` +
				`{"parts":[{"tool_name":"a_b","content":{"r":1},"tool_call_id":"call_1","timestamp":"2024-01-15T10:30:00Z","part_kind":"tool-return"},` +
				`{"tool_name":"unknown_tool","content":{"raw":"oops"},"tool_call_id":"c2","timestamp":"2024-01-15T10:30:00Z","part_kind":"tool-return"}],"kind":"request"}]`},
	}
	for _, tc := range cases {
		got, err := JSON(tc.in, Options{SystemPrompt: tc.sys, Now: fixedNow})
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(got)) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// The one rule for a call's arguments (CallArguments), case by case: the
// stored call (on the assistant message; "" none), the answering tool
// message's tool_arguments ("" absent) and content, and what a sender sends
// (ArgsObject of the result). SPEC §5: tool_arguments when present, else the
// content parsed; remstore puts a stored call between the two.
func TestCallArguments(t *testing.T) {
	t.Parallel()
	none := "-" // no tool message answers the stored call
	cases := []struct {
		name                  string
		stored, args, content string
		want                  string
	}{
		{"object args", "", `{"a":1}`, `x`, `{"a":1}`},
		{"list args", "", `[1,2]`, `{"c":1}`, `{}`},
		{"number args", "", `7`, `{}`, `{}`},
		{"string holding an object", "", `"{\"s\":1}"`, ``, `{"s":1}`},
		{"string not JSON", "", `"nope"`, ``, `{}`},
		{"null args: the content", "", `null`, `{"c":2}`, `{"c":2}`},
		{"empty object args", "", `{}`, `{"c":2}`, `{}`},
		{"no args, object content", "", ``, `{"c":3}`, `{"c":3}`},
		{"no args, list content", "", ``, `[1]`, `{}`},
		{"no args, bad content", "", ``, `{`, `{}`},
		{"no args, empty content", "", ``, ``, `{}`},
		{"spaced args compacted", "", ` { "a" : 1 } `, ``, `{"a":1}`},
		// A stored call: tool_arguments present win, as SPEC §5 says and the
		// Python service does on the same rows.
		{"stored call, other tool_arguments", `{"city":"Lisbon"}`, `{"city":"Porto"}`, `{"c":21}`, `{"city":"Porto"}`},
		{"stored call, same tool_arguments", `{"city":"Lisbon"}`, `{"city":"Lisbon"}`, ``, `{"city":"Lisbon"}`},
		{"stored call, empty tool_arguments", `{"q":1}`, `{}`, ``, `{}`},
		{"stored call, list tool_arguments", `{"q":1}`, `[1]`, ``, `{}`},
		{"stored call, null tool_arguments", `{"q":1}`, `null`, `{"c":1}`, `{"q":1}`},
		// Without tool_arguments the stored call goes, never the result.
		{"stored call, no tool_arguments", `{"q":1}`, ``, `{"c":1}`, `{"q":1}`},
		{"stored empty call, object result", `{}`, ``, `{"h":10}`, `{}`},
		{"stored call without arguments", ``, ``, `{"h":10}`, `{}`},
		{"stored call holding a string", `"{\"q\":2}"`, ``, ``, `{"q":2}`},
		{"stored list arguments", `[1]`, ``, `{"h":10}`, `{}`},
		{"stored call, no result", `{"q":1}`, none, none, `{"q":1}`},
	}
	for _, c := range cases {
		var stored *models.ToolCall
		if c.stored != "" || strings.HasPrefix(c.name, "stored") {
			stored = &models.ToolCall{ID: "c1", Name: "f", Arguments: c.stored}
		}
		var result *models.HistoryMessage
		if c.args != none {
			result = &models.HistoryMessage{Role: "tool", Content: c.content, ToolCallID: "c1", ToolName: "f"}
			if c.args != "" {
				result.ToolArguments = []byte(c.args)
			}
		}
		got := CallArguments(stored, result)
		if sent := string(ArgsObject(models.ToolCall{Arguments: got})); sent != c.want {
			t.Errorf("%s: sent %s (CallArguments %s), want %s", c.name, sent, got, c.want)
		}
	}
	// Where tool_arguments hold the stored call's value, the stored text
	// goes as the model wrote it (an adapter sends arguments as text).
	stored := &models.ToolCall{ID: "c1", Name: "f", Arguments: `{"city": "Lisbon", "n": 1}`}
	result := &models.HistoryMessage{Role: "tool", ToolCallID: "c1", ToolArguments: []byte(`{"n":1,"city":"Lisbon"}`)}
	if got := CallArguments(stored, result); got != stored.Arguments {
		t.Errorf("the same arguments: %s, want the stored text %s", got, stored.Arguments)
	}
}

// Every sender builds its calls through Pair: a stored call answered by a
// tool message whose tool_arguments differ goes with those; without
// tool_arguments, with its own; a synthesized one with the result's.
func TestPairCallArguments(t *testing.T) {
	t.Parallel()
	asst := models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{
		{ID: "w1", Name: "weather", Arguments: `{"city": "Lisbon"}`},
		{ID: "t1", Name: "clock", Arguments: `{}`},
		{ID: "gone", Name: "popped", Arguments: `{"x":1}`},
	}}
	tools := []models.HistoryMessage{
		{Role: "tool", Content: `{"celsius":21}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: []byte(`{"city":"Porto"}`)},
		{Role: "tool", Content: `{"h":10}`, ToolCallID: "t1", ToolName: "clock"},
		{Role: "tool", Content: `{"r":1}`, ToolCallID: "o1", ToolName: "other"},
		{Role: "tool", Content: `{"again":1}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: []byte(`{"city":"Faro"}`)},
	}
	want := []string{`w1 {"city":"Porto"}`, `t1 {}`, `o1 {"r":1}`}
	var got []string
	for _, c := range Pair(&asst, tools, 1).Calls {
		got = append(got, c.ID+" "+string(ArgsObject(c)))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Pair's calls %q, want %q", got, want)
	}
	// WalkAll (a history given back as stored) keeps the unanswered call
	// with its own arguments, and the answered ones as Pair sends them.
	got = nil
	_ = WalkAll(append([]models.HistoryMessage{asst}, tools...), func(_ int, _ *models.HistoryMessage, turn *Turn) error {
		for _, c := range turn.Calls {
			got = append(got, c.ID+" "+string(ArgsObject(c)))
		}
		return nil
	})
	if want := []string{`w1 {"city":"Porto"}`, `t1 {}`, `gone {"x":1}`, `o1 {"r":1}`}; !reflect.DeepEqual(got, want) {
		t.Errorf("WalkAll's calls %q, want %q", got, want)
	}
}

func TestSanitizeToolName(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "unknown_tool", "ok_name-1": "ok_name-1", "web.search": "web_search",
		"mcp:server/tool name": "mcp_server_tool_name", "résumé": "r_sum_", "😀x": "_x"} {
		if got := SanitizeToolName(in); got != want {
			t.Errorf("SanitizeToolName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzConvert(f *testing.F) {
	files, _ := filepath.Glob(fixtures.Path("histories", "*.json"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte(`[{"role":"tool","content":"\"{\\\"a\\\":1}\""}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := models.DecodeHistory(data)
		if err != nil {
			return
		}
		out := Convert(h, Options{SystemPrompt: "s", Now: fixedNow})
		for _, m := range out {
			for _, p := range m.Parts {
				if p.PartKind == "tool-call" && (len(p.Args) == 0 || p.Args[0] != '{' || p.ToolCallID == "") {
					t.Fatalf("tool-call without object args or id: %+v", p)
				}
			}
		}
		want := stdJSON(t, out)
		if got := appendJSON(nil, out); !bytes.Equal(got, want) {
			t.Fatalf("encoders differ:\n%s\n%s", got, want)
		}
		// The streaming writer, fed message by message, writes the same bytes.
		var b bytes.Buffer
		w := NewWriter(&b)
		st := NewStream(Options{SystemPrompt: "s", Now: fixedNow}, w.Write)
		for _, m := range h {
			if err := st.Add(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Close(); err != nil || w.Close() != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("stream differs:\n%s\n%s", b.Bytes(), want)
		}
	})
}

// stdJSON is what encoding/json writes for msgs (HTML escaping off).
func stdJSON(t testing.TB, msgs []Message) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msgs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The hand-written encoder writes exactly what encoding/json writes.
func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(fixtures.Path("histories", "*.json"))
	for _, f := range files {
		in, _ := os.ReadFile(f)
		h, _ := models.DecodeHistory(in)
		msgs := Convert(h, Options{SystemPrompt: "S <&> \u2028", Now: fixedNow})
		if got, want := appendJSON(nil, msgs), stdJSON(t, msgs); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", f, got, want)
		}
	}
	for _, s := range []string{"", "plain", "q\"b\\s", "\x00\x01\b\f\n\r\t\x1f\x7f", "<a&b>", "\u2028\u2029", "é😀", "\xff\xfe bad", "e\u0301"} {
		msgs := Convert([]models.HistoryMessage{{Role: "user", Content: s}, {Role: "tool", Content: s, ToolName: s, ToolCallID: s}}, Options{SystemPrompt: s, Now: fixedNow})
		if got, want := appendJSON(nil, msgs), stdJSON(t, msgs); !bytes.Equal(got, want) {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
}

// The fast path agrees with parse-and-format on the forms it accepts.
func TestUTCZ(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2024-01-15T10:30:00+00:00", "2024-01-15T10:30:00.123456+00:00", "2024-01-15T10:30:00.000000+00:00",
		"2024-01-15T10:30:00.000001+00:00", "2024-01-15T10:30:00Z", "2024-01-15T12:30:00+02:00", "2024-01-15 10:30:00+00:00", "2024-13-xxT10:30:00+00:00", "garbage"} {
		z, ok := utcZ(s)
		tm, err := models.ParseTimestamp(s)
		switch {
		case ok && (err != nil || z != FormatTimestamp(tm)):
			t.Errorf("utcZ(%q) = %q, parse says %v %v", s, z, FormatTimestamp(tm), err)
		case !ok && (strings.HasSuffix(s, "+00:00") && err == nil && s[10] == 'T' && len(s) >= 25):
			t.Errorf("utcZ(%q) refused a plain form", s)
		}
	}
}

// A row the peer wrote with a role of its own cannot become a pydantic-ai
// part: it is reported (SPEC §1: never dropped in silence), or with Strict
// refused. A stored system message is skipped by SPEC §5's rule, unreported.
func TestUnmappedRolesAreReported(t *testing.T) {
	hist := []models.HistoryMessage{
		{Role: "user", Content: "hi"}, {Role: "bot", Content: "?"}, {Role: "system", Content: "s"},
		{Role: "assistant", Content: "ok"}, {Role: "USER", Content: "!"}, {Role: "", Content: "empty is assistant"},
	}
	var got Unmappeds
	var seen []Unmapped
	msgs := Convert(hist, Options{OnUnmapped: func(u Unmapped) { got.Add(u); seen = append(seen, u) }})
	want := []Unmapped{{Index: 1, Role: "bot"}, {Index: 4, Role: "USER"}}
	if !reflect.DeepEqual(seen, want) {
		t.Fatalf("reported %v, want %v", seen, want)
	}
	if len(msgs) != 3 { // user; assistant "ok"; assistant ""→"empty is assistant"
		t.Fatalf("%d messages, want 3", len(msgs))
	}
	if s := got.String(); s != `2 messages left out of the pydantic-ai history: message 1 (role "bot"), message 4 (role "USER"); their roles have no pydantic-ai form` {
		t.Fatalf("report %q", s)
	}
	_, err := JSON(hist, Options{Strict: true})
	fe, ok := models.AsFieldError(err)
	if !ok || fe.Index != 1 || fe.Field != "role" || !strings.Contains(err.Error(), `"bot" has no pydantic-ai form`) {
		t.Fatalf("strict: %v", err)
	}
	var buf bytes.Buffer
	n, err := WriteStream(&buf, Options{Strict: true}, func(fn func(models.HistoryMessage) error) error {
		for _, m := range hist {
			if err := fn(m); err != nil {
				return err
			}
		}
		return nil
	})
	if fe, ok := models.AsFieldError(err); !ok || fe.Index != 1 || n != 1 {
		t.Fatalf("strict stream: %d written, %v", n, err)
	}
	if _, err := JSON(hist[:1], Options{Strict: true}); err != nil {
		t.Fatalf("strict on a clean history: %v", err)
	}
}

// A stored call keeps its id, name and place; a result without one gets a
// synthesized call (SPEC §5), after the stored ones. call_w1's tool message
// says {"city": "Paris"} where the stored call said {"city": "Paris", "unit":
// "C"}: the tool message's tool_arguments go (SPEC §5, CallArguments);
// call_w2's has none, so the stored call's go. Hand-computed from
// fixtures/histories/23_typed_tool_calls.json.
func TestTypedCallsPreferred(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile(fixtures.Path("histories", "23_typed_tool_calls.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := models.DecodeHistory(in)
	if err != nil {
		t.Fatal(err)
	}
	out := Convert(h, Options{Now: fixedNow})
	var calls []string
	for _, p := range out[1].Parts {
		calls = append(calls, p.PartKind+" "+p.ToolName+" "+p.ToolCallID+" "+string(p.Args))
	}
	want := []string{`tool-call get_weather call_w1 {"city":"Paris"}`, `tool-call get_weather call_w2 {"city":"Rome"}`,
		`tool-call clock call_t9 {"tz":"UTC"}`, `text   `}
	if !reflect.DeepEqual(calls, want) {
		t.Fatalf("parts\n%q\nwant\n%q", calls, want)
	}
	if p := out[3].Parts[0]; p.ToolCallID != "call_n1" || string(p.Args) != "{}" {
		t.Fatalf("a call with no arguments: %+v", p)
	}
}

// A stored call whose result was removed (a pop) is not in the pydantic-ai
// history: the peer, which knows calls only from results, shows none, and a
// call without its return breaks the next model request.
func TestUnansweredStoredCallLeftOut(t *testing.T) {
	t.Parallel()
	h := []models.HistoryMessage{{Role: "user", Content: "q"},
		{Role: "assistant", Content: "calling", ToolCalls: []models.ToolCall{{ID: "a", Name: "f"}, {ID: "b", Name: "g"}}},
		{Role: "tool", Content: "{}", ToolCallID: "b", ToolName: "g"}}
	out := Convert(h, Options{Now: fixedNow})
	var ids []string
	for _, p := range out[1].Parts {
		ids = append(ids, p.PartKind+":"+p.ToolCallID)
	}
	if want := []string{"tool-call:b", "text:"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("parts %v, want %v", ids, want)
	}
}

package models

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestMarshalKeyOrder(t *testing.T) {
	t.Parallel()
	ts := "2024-01-15T10:30:00+00:00"
	cases := []struct {
		m    HistoryMessage
		want string
	}{
		{HistoryMessage{Role: RoleUser, Content: "Hello"}, `{"role":"user","content":"Hello","timestamp":null}`},
		{HistoryMessage{Role: RoleUser, Content: "<a&b>", OmitTimestamp: true}, `{"role":"user","content":"<a&b>"}`},
		{HistoryMessage{Role: RoleTool, Content: "{}", Timestamp: &ts, ToolCallID: "c", ToolName: "n", ToolArguments: []byte(`{ "b": 1, "a": [1, 2] }`)},
			`{"role":"tool","content":"{}","timestamp":"2024-01-15T10:30:00+00:00","tool_call_id":"c","tool_name":"n","tool_arguments":{"b":1,"a":[1,2]}}`},
		{HistoryMessage{Role: RoleAssistant, Content: "x", Timestamp: &ts, Compressed: true, OriginalLength: 401, EntityKey: "session-s-msg-1",
			Extra: []Field{{Key: "zeta", Value: []byte(`1`)}, {Key: "alpha", Value: []byte(`null`)}}},
			`{"role":"assistant","content":"x","timestamp":"2024-01-15T10:30:00+00:00","zeta":1,"alpha":null,"_compressed":true,"_original_length":401,"_entity_key":"session-s-msg-1"}`},
		{HistoryMessage{Role: RoleAssistant, Content: "x", OmitTimestamp: true, Compressed: true, OriginalLength: 5},
			`{"role":"assistant","content":"x","_compressed":true,"_original_length":5}`},
	}
	for _, tc := range cases {
		got, err := tc.m.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("\n got %s\nwant %s", got, tc.want)
		}
	}
}

// FormatTimestamp writes its digits itself; time.Format's layout is the
// oracle, for any instant (years beyond 0–9999 take the layout itself).
func FuzzFormatTimestamp(f *testing.F) {
	f.Add(int64(1705314600), int64(123456789), 0)
	f.Add(int64(-62135596800), int64(0), -3600)
	f.Add(int64(253402300799), int64(999999999), 50400)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		in := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(26*3600)))
		if got, want := FormatTimestamp(in), formatLayout(in); got != want {
			t.Fatalf("FormatTimestamp(%v) = %s, time.Format says %s", in, got, want)
		}
	})
}

// Python: datetime(2024,1,15,10,30,0,123456,tzinfo=timezone.utc).isoformat()
// == '2024-01-15T10:30:00.123456+00:00'; without microseconds no fraction.
func TestFormatTimestamp(t *testing.T) {
	t.Parallel()
	cases := map[time.Time]string{
		time.Date(2024, 1, 15, 10, 30, 0, 123456000, time.UTC):                    "2024-01-15T10:30:00.123456+00:00",
		time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC):                            "2024-01-15T10:30:00+00:00",
		time.Date(2024, 1, 15, 10, 30, 0, 1000, time.UTC):                         "2024-01-15T10:30:00.000001+00:00",
		time.Date(2024, 1, 15, 10, 30, 0, 999, time.UTC):                          "2024-01-15T10:30:00+00:00",
		time.Date(2024, 1, 15, 12, 30, 0, 500000000, time.FixedZone("x", 2*3600)): "2024-01-15T10:30:00.500000+00:00",
		time.Date(987, 12, 31, 23, 59, 59, 999999999, time.UTC):                   "0987-12-31T23:59:59.999999+00:00",
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC):                              "10000-01-01T00:00:00+00:00",
	}
	for in, want := range cases {
		if got := FormatTimestamp(in); got != want {
			t.Errorf("FormatTimestamp(%v) = %s, want %s", in, got, want)
		}
	}
	for _, s := range []string{"2024-01-15T10:30:00Z", "2024-01-15T12:30:00+02:00", "2024-01-15T10:30:00", "2024-01-15 10:30:00.000000"} {
		got, err := ParseTimestamp(s)
		if err != nil || !got.Equal(time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)) {
			t.Errorf("ParseTimestamp(%q) = %v, %v", s, got, err)
		}
	}
}

func TestDecodeHistoryErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		``:                                "malformed JSON",
		`{}`:                              "expected a JSON array",
		`[1]`:                             "message 0: expected a JSON object",
		`[{"content":"x"}]`:               `message 0: field "role": missing`,
		`[{"role":null}]`:                 `message 0: field "role": must be a string`,
		`[{"role":"user","content":5}]`:   `message 0: field "content": must be a string`,
		`[{"role":"user","timestamp":1}]`: `field "timestamp": must be a string or null`,
		`[{"role":"user"},{"role":"a","role":"b"}]`:  `message 1: field "role": duplicate key`,
		`[{"role":"user"}] x`:                        "trailing data",
		`[{"role":"user"}`:                           "malformed JSON",
		`[{"role":"user","_original_length":-1}]`:    "non-negative integer",
		"[{\"role\":\"user\",\"content\":\"\xff\"}]": `field "content": invalid UTF-8`,
		"[{\"\xff\":1,\"role\":\"user\"}]":           "invalid UTF-8",
	}
	for in, want := range cases {
		_, err := DecodeHistory([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("DecodeHistory(%q) err = %v, want %q", in, err, want)
		}
		if _, ok := AsFieldError(err); !ok {
			t.Errorf("DecodeHistory(%q): %T is not a FieldError", in, err)
		}
	}
}

// Decoding then encoding keeps every key, its presence and its value.
func TestDecodeEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	in := `[{"role":"user","content":null},{"role":"tool","content":"{}","timestamp":null,"tool_call_id":"c","tool_name":"n","tool_arguments":[1,{"a":null}],"id":"x","custom":{"k":"v"}},` +
		`{"role":"assistant","content":"a","timestamp":"2024-01-15T10:30:00Z","_compressed":true,"_original_length":9,"_entity_key":"session-s-msg-2"}]`
	msgs, err := DecodeHistory([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := EncodeHistory(&b, msgs); err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":""},{"role":"tool","content":"{}","timestamp":null,"id":"x","tool_call_id":"c","tool_name":"n","tool_arguments":[1,{"a":null}],"custom":{"k":"v"}},` +
		`{"role":"assistant","content":"a","timestamp":"2024-01-15T10:30:00Z","_compressed":true,"_original_length":9,"_entity_key":"session-s-msg-2"}]` + "\n"
	if b.String() != want {
		t.Errorf("\n got %s\nwant %s", b.String(), want)
	}
	if got, _ := DecodeHistory([]byte("[]")); got == nil || len(got) != 0 {
		t.Error("empty array must decode to an empty, non-nil slice")
	}
}

func TestStringArray(t *testing.T) {
	t.Parallel()
	for _, in := range [][]string{{}, {"a"}, {"a b", `q"u`, `b\s`, "", "NULL", "x,y", "{}", "é"}} {
		v, _ := StringArray(in).Value()
		var out StringArray
		if err := out.Scan(v); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual([]string(out), in) {
			t.Errorf("%q -> %v -> %q", in, v, out)
		}
	}
	var out StringArray
	if err := out.Scan(`{a,NULL,"b"}`); err != nil || !reflect.DeepEqual([]string(out), []string{"a", "", "b"}) {
		t.Errorf("unquoted NULL: %q %v", out, err)
	}
	for _, bad := range []string{`a,b`, `{"a}`, `{`} {
		if err := out.Scan(bad); err == nil {
			t.Errorf("Scan(%q) accepted", bad)
		}
	}
}

// unquote's shortcut gives what json.Unmarshal gives, for every value the
// decoder lets through (valid JSON, valid UTF-8).
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"x"`, `"a\nb"`, `""`, `"\u00e9"`, `1`, `null`, `"é"`, `{"a":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || !utf8.Valid(raw) {
			return
		}
		raw = bytes.TrimSpace(raw) // as json.Decoder hands a RawMessage
		var want string
		wantErr := json.Unmarshal(raw, &want)
		got, ok := unquote(raw)
		if ok != (wantErr == nil) || got != want {
			t.Fatalf("unquote(%q) = %q, %v; json.Unmarshal: %q, %v", raw, got, ok, want, wantErr)
		}
	})
}

func FuzzDecodeHistory(f *testing.F) {
	for _, s := range []string{`[]`, `[{"role":"user","content":"x"}]`, `[{"role":"tool","tool_arguments":{"a":[1]},"x":null}]`, `[{"role":"a","role":"b"}]`, "[{\"role\":\"\xff\"}]",
		` [ {"role" : "user", "x": [1, "a]b", {"c": "}\"]\\"}, -1.5e3, true], "content": "q\n"} , {"role":"tool","_original_length":3}] `,
		`[{"role":"user","content":1}]`, `[{"role":"user"},2]`, `{"role":"user"}`, `[{"\u0072ole":"user"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// The hand walk and encoding/json's tokens: the same messages, the
		// same error, wherever the walk takes the document.
		if json.Valid(data) {
			if fast, ok, errFast := decodeValid(data); ok {
				slow, errSlow := decodeTokens(data)
				if fmt.Sprint(errFast) != fmt.Sprint(errSlow) || !reflect.DeepEqual(fast, slow) {
					t.Fatalf("%q: walked %v %v; tokens %v %v", data, fast, errFast, slow, errSlow)
				}
			}
		}
		msgs, err := DecodeHistory(data)
		if err != nil {
			return
		}
		var b1, b2 bytes.Buffer
		if err := EncodeHistory(&b1, msgs); err != nil {
			t.Fatalf("encode after decode: %v", err)
		}
		again, err := DecodeHistory(b1.Bytes())
		if err != nil {
			t.Fatalf("re-decode of %s: %v", b1.Bytes(), err)
		}
		_ = EncodeHistory(&b2, again)
		if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
			t.Fatalf("not stable:\n%s\n%s", b1.Bytes(), b2.Bytes())
		}
	})
}

// BenchmarkDecodeHistory decodes a 4-message turn as the API receives it,
// by DecodeHistory (the hand walk) and by encoding/json's tokens alone.
func BenchmarkDecodeHistory(b *testing.B) {
	turn := []byte(`[{"role":"user","content":"question 1: what are the options for the trip?"},` +
		`{"role":"assistant","content":"` + strings.Repeat("Here is a detailed answer with several options. ", 12) + `"},` +
		`{"role":"tool","content":"{\"status\":\"success\",\"results\":[1,2,3]}","tool_call_id":"call_1","tool_name":"search","tool_arguments":{"q":"trip"}},` +
		`{"role":"assistant","content":"Done.","timestamp":"2026-11-25T10:00:00+00:00"}]`)
	for _, c := range []struct {
		name   string
		decode func([]byte) ([]HistoryMessage, error)
	}{{"DecodeHistory", DecodeHistory}, {"tokens", decodeTokens}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode(turn); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeManyKeys: a message of many keys decodes in linear time (the
// seen keys move to a map past a few) and a repeated key is still named,
// wherever it comes.
func TestDecodeManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`[{"role":"user"`)
	for i := range 200000 {
		fmt.Fprintf(&b, `,"k%d":0`, i)
	}
	doc := b.String()
	msgs, err := DecodeHistory([]byte(doc + `}]`))
	if err != nil || len(msgs) != 1 || len(msgs[0].Extra) != 200000 {
		t.Fatalf("%d messages, %v", len(msgs), err)
	}
	for _, dup := range []string{`,"k3":1}]`, `,"k199999":1}]`, `,"role":"tool"}]`} {
		_, err := DecodeHistory([]byte(doc + dup))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Reason != "duplicate key" {
			t.Errorf("%s: %v, want a duplicate key", dup, err)
		}
	}
}

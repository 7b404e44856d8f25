package convert

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendSourced writes exactly what encoding/json (marshal) writes for the
// same message, for every message of the real agents' fixtures and of
// hand-made ones with odd values; a key that needs escaping is left to
// encoding/json.
func TestAppendSourcedIsMarshal(t *testing.T) {
	checked := 0
	check := func(name string, env map[string]json.RawMessage, parts []part) {
		t.Helper()
		msg := map[string]any{"parts": fieldsOf(parts)}
		for k, v := range env {
			if k != "parts" {
				msg[k] = v
			}
		}
		want, err := marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendSourced(nil, env, parts)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%s: appendSourced (ok %v)\n%s\nmarshal\n%s", name, ok, got, want)
		}
		checked++
	}
	for name, rows := range fixtureRows(t) {
		for i := range rows {
			src, ok := sourceOf(&rows[i])
			if !ok {
				continue
			}
			env := src.Message
			if env == nil {
				env = map[string]json.RawMessage{"kind": json.RawMessage(`"request"`)}
			}
			check(name, env, fillParts(&rows[i], src))
		}
	}
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	check("odd values", map[string]json.RawMessage{"kind": raw(`"response"`), "z": raw(`null`), "a": raw(`"<&>\u2028"`), "parts": raw(`"ignored"`)},
		[]part{{f: map[string]json.RawMessage{"content": raw(`"x"`), "b": raw(`[1,{"c":2}]`)}}, {}, {f: map[string]json.RawMessage{}},
			{f: map[string]json.RawMessage{"content": raw(`"stored"`), "z": raw(`1`)}, content: raw(`"row's"`), own: true},
			{content: raw(`"row's"`), own: true}, {f: map[string]json.RawMessage{"content": raw(`"stored"`)}, text: "a \"<b>\" \u2028\n", isText: true, own: true}})
	check("no parts", map[string]json.RawMessage{"kind": raw(`"request"`)}, nil)
	if checked < 20 {
		t.Fatalf("only %d messages checked", checked)
	}
	if _, ok := appendSourced(nil, map[string]json.RawMessage{"k\"ey": raw(`1`)}, nil); ok {
		t.Fatal("a key that needs escaping was written raw")
	}
	if _, ok := appendSourced(nil, map[string]json.RawMessage{}, []part{{f: map[string]json.RawMessage{"<b>": raw(`1`)}}}); ok {
		t.Fatal("a part key that needs escaping was written raw")
	}
}

// rawString gives what json.Unmarshal into a string gives, for every shape
// of value.
func TestRawStringIsUnmarshal(t *testing.T) {
	for _, v := range []string{`"abc"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\xfe\"", `"a\\b"`, `"\n"`, `123`, `null`, `true`,
		`{"a":1}`, `["x"]`, `"`, `x"`, `"<&>"`, "\"\u2028\"", ``, `nul`, `false`, `-1`, `[`, ` "a"`} {
		var want string
		_ = json.Unmarshal([]byte(v), &want)
		if got := rawString(json.RawMessage(v)); got != want {
			t.Errorf("rawString(%q) = %q, json.Unmarshal gives %q", v, got, want)
		}
	}
}

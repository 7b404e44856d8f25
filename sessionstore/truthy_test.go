package sessionstore

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/remstore/remstore/internal/msgcheck"
)

// decodedTruthy is the oracle: Python's truth value of the decoded value.
func decodedTruthy(raw []byte) bool {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil || d.More() {
		return true // rawTruthy's answer for what is not one JSON value
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

var truthyCases = []struct {
	raw  string
	want bool
}{
	{``, false}, {`null`, false}, {`false`, false}, {`true`, true}, {`""`, false}, {`"x"`, true},
	{`0`, false}, {`0.0`, false}, {`-0`, false}, {`1`, true}, {`1e-400`, false}, {`[]`, false}, {`[ ]`, false},
	{" [\n\t] ", false}, {`[0]`, true}, {`[[]]`, true}, {`{}`, false}, {`{ }`, false}, {`{"a":0}`, true},
	{`{"a":{}}`, true}, {`[null]`, true},
}

func TestRawTruthy(t *testing.T) {
	for _, c := range truthyCases {
		if got := msgcheck.RawTruthy(json.RawMessage(c.raw)); got != c.want {
			t.Errorf("rawTruthy(%q) = %v, want %v", c.raw, got, c.want)
		}
		if c.raw != "" && decodedTruthy([]byte(c.raw)) != c.want { // the oracle agrees with the hand-written table
			t.Errorf("oracle(%q) = %v, want %v", c.raw, !c.want, c.want)
		}
	}
}

// FuzzRawTruthy holds rawTruthy to the decoded value's truth on every valid
// JSON value (what the database and the request decoder hand it).
func FuzzRawTruthy(f *testing.F) {
	for _, c := range truthyCases {
		f.Add([]byte(c.raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		if got, want := msgcheck.RawTruthy(raw), decodedTruthy(raw); got != want {
			t.Fatalf("rawTruthy(%q) = %v, want %v", raw, got, want)
		}
	})
}

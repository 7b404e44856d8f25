package models

import (
	"bytes"
	"encoding/json"
	"testing"
)

// oracle is what AppendJSONString must write: encoding/json's own string
// encoding without HTML escaping.
func oracle(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func TestAppendJSONStringIsEncodingJSON(t *testing.T) {
	cases := []string{"", "plain", `"quoted" \ back`, "<b>&amp;</b>", "line\nfeed\r\ttab\b\f", "\x00\x01\x1f\x7f",
		"snow ☃ emoji 😀", "bidi \u202e flip", "sep \u2028 and \u2029", "bad \xff\xfe utf8 \xc3", "\xed\xa0\x80 surrogate",
		"trailing \xe2\x82"}
	for b := range 256 {
		cases = append(cases, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range cases {
		if got, want := AppendJSONString(nil, s), oracle(s); !bytes.Equal(got, want) {
			t.Errorf("%q: wrote %s, encoding/json writes %s", s, got, want)
		}
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\u2028", "\xff", "<&>", "日本語\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := AppendJSONString([]byte("prefix"), s), append([]byte("prefix"), oracle(s)...); !bytes.Equal(got, want) {
			t.Fatalf("%q: wrote %s, encoding/json writes %s", s, got, want)
		}
	})
}

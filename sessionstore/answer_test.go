package sessionstore

import (
	"bytes"
	"encoding/json"
	"testing"
)

func encodingJSON(t testing.TB, a StoreAnswer) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestStoreAnswerJSON holds AppendJSON to encoding/json, the oracle.
func TestStoreAnswerJSON(t *testing.T) {
	for _, a := range []StoreAnswer{
		{},
		{SessionID: "6c5b0f7b-6795-585e-90a9-7720b09a58b0", Stored: 4, Keys: []string{"session-x-msg-0", "k<&>\u2028\"\\\x01é"}, Last: "empty"},
		{SessionID: "s", Stored: -1, Keys: []string{}},
		{SessionID: "\xff", Stored: 1 << 40, Keys: []string{""}, Last: "x"},
	} {
		if got, want := a.AppendJSON(nil), encodingJSON(t, a); !bytes.Equal(got, want) {
			t.Errorf("%+v:\n got %s\nwant %s", a, got, want)
		}
	}
}

func FuzzStoreAnswerJSON(f *testing.F) {
	f.Add("sid", 3, "k1", "k2", "last")
	f.Add("\xff<", -7, "", "\u2029", "")
	f.Fuzz(func(t *testing.T, sid string, n int, k1, k2, last string) {
		a := StoreAnswer{SessionID: sid, Stored: n, Keys: []string{k1, k2}, Last: last}
		if got, want := a.AppendJSON(nil), encodingJSON(t, a); !bytes.Equal(got, want) {
			t.Fatalf("%+v:\n got %s\nwant %s", a, got, want)
		}
	})
}

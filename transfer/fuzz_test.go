package transfer

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzDecodeRecord: an import line decodes (goccy/go-json) to exactly what
// encoding/json makes of it, or is refused as malformed where encoding/json
// refuses it too; nothing panics, and the record checks run on whatever
// decoded.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range []string{
		`{"kind":"message","id":"b8dd125e-19aa-4a85-bfe6-ef325584d5af","session_id":"350a9318-c485-5f59-82db-d94fb09d034d","role":"assistant","content":"I'll coordinate.","tool_calls":null,"graph_edges":[],"metadata":{"entity_key":"session-350a9318-c485-5f59-82db-d94fb09d034d-msg-1","message_index":1},"tags":[],"trace_id":null,"span_id":null,"user_id":"anonymous","tenant_id":"anonymous","created_at":"2026-11-22T21:29:05.062269Z","updated_at":"2026-11-22T21:29:05.062269Z","deleted_at":null}`,
		`{"kind":"session","id":"350a9318-c485-5f59-82db-d94fb09d034d","name":"n","status":"active","metadata":{},"graph_edges":[],"tags":["a"],"created_at":"2026-11-22T21:29:05.062269Z","updated_at":"2026-11-22T21:29:05.062269Z"}`,
		`{"kind":"message","content":"a\u0000b\ud800","tags":[1]}`,
		`{"KIND":"message","Content":"x","metadata":{"a":[1,2,{"b":null}]}}`,
		`{"kind":"message","content":"\xff\xfe"}`,
		`{"kind":"message","id":"not-a-uuid"}`,
		`[1,2]`, `nul`, `{"kind":`, `{"kind":"message"}garbage`, `{"content":1e999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want importRecord
		gerr := decodeRecord(raw, &got)
		werr := json.Unmarshal(raw, &want)
		if gerr == nil && werr != nil {
			t.Fatalf("accepted what encoding/json refuses (%v): %q", werr, raw)
		}
		if werr == nil && gerr != nil {
			t.Fatalf("refused what encoding/json accepts (%v): %q", gerr, raw)
		}
		if gerr != nil {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded differently from encoding/json:\n got %+v\nwant %+v\nfrom %q", got, want, raw)
		}
		_, _ = got.message()
		_, _ = got.session()
	})
}

package convert

import (
	"encoding/json"
	"reflect"
	"testing"
)

// decodeSource is json.Unmarshal into a source, fast path or not: the same
// source, or an error both times.
func FuzzDecodeSource(f *testing.F) {
	for _, rows := range fixtureRows(f) {
		for _, m := range rows {
			if v, ok := m.ExtraRaw(SourceKey); ok {
				f.Add([]byte(v))
			}
		}
	}
	for _, s := range []string{`null`, `{}`, `[]`, `{"message":null,"parts":null}`, `{"MESSAGE":{"a":1}}`, `{"message":{"a":1},"message":{"b":2}}`,
		`{"parts":[{"a":1},null,{"a":2,"a":3}],"from_row":[0],"lens":[1,2]}`, `{"parts":[5]}`, `{"message":"x"}`, `{"from_row":[1.5]}`,
		"{\"message\":{\"k\xff\":1}}", `{"message":{"k\u0065y":1}}`, ` { "parts" : [ { "a" : [1, {"b": "c\"d"}] } ] , "x": 1e5 } `, `{"parts":[{"a":1}]`,
		`{"from_row":[0,2],"lens":[ 1 , 20 ]}`, `{"lens":[1234567890123]}`, `{"lens":[-1]}`, `{"from_row":[]}`, `{"lens":[1e2]}`,
		`{"lens":[1,]}`, `{"lens":[99999999999999999999]}`, `{"from_row":null,"lens":[0]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var want, got source
		werr := json.Unmarshal(b, &want)
		gerr := decodeSource(b, &got)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("%q: json.Unmarshal error %v, decodeSource %v", b, werr, gerr)
		}
		if werr == nil && !reflect.DeepEqual(want, got) {
			t.Fatalf("%q:\njson.Unmarshal %#v\ndecodeSource   %#v", b, want, got)
		}
	})
}

// Every source a pydantic-ai store writes takes the fast path (the fuzz
// target above proves the path right; this, that it is the one taken).
func TestStoredSourcesTakeTheFastPath(t *testing.T) {
	n := 0
	for name, rows := range fixtureRows(t) {
		for i, m := range rows {
			if v, ok := m.ExtraRaw(SourceKey); ok {
				var src source
				if !fast(v, &src) {
					t.Fatalf("%s row %d: the source falls back to json.Unmarshal: %s", name, i, v)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d sources", n)
	}
}

// BenchmarkDecodeSource splits every stored source of the fixtures.
func BenchmarkDecodeSource(b *testing.B) {
	var srcs [][]byte
	for _, rows := range fixtureRows(b) {
		for _, m := range rows {
			if v, ok := m.ExtraRaw(SourceKey); ok {
				srcs = append(srcs, []byte(v))
			}
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range srcs {
			var src source
			if err := decodeSource(s, &src); err != nil {
				b.Fatal(err)
			}
		}
	}
}

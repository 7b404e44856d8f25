package sessionstore

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// An answer cut in Go by cutInGo and CompressParts is what Compress makes
// of it, whatever its length and code points; one it leaves whole is one
// ShouldCompressOnLoad leaves whole (the load's rule before); a long one
// of invalid UTF-8 goes to Compress, which refuses it.
func FuzzCutInGo(f *testing.F) {
	for _, s := range []string{"", "short", strings.Repeat("a", 20), strings.Repeat("a", 21), strings.Repeat("é", 21), strings.Repeat("é", 20),
		strings.Repeat("ab😀", 9), "\xff" + strings.Repeat("a", 30), strings.Repeat("a", 10) + "€" + strings.Repeat("b", 10)} {
		f.Add(s, 10)
	}
	f.Fuzz(func(t *testing.T, content string, T int) {
		if T < 1 || T > 64 {
			return
		}
		comp, err := compressor.New(T)
		if err != nil {
			return
		}
		m := models.HistoryMessage{Role: models.RoleAssistant, Content: content}
		want, werr := comp.Compress(m, "session-x-msg-3")
		head, tail, n, ok := cutInGo(content, T)
		if !ok {
			if comp.ShouldCompressOnLoad(m) {
				t.Fatalf("%q: left whole, but the load's rule cuts it", content)
			}
			return
		}
		if head == "" && tail == "" {
			if werr == nil {
				t.Fatalf("%q: no parts, yet Compress cuts it", content)
			}
			return
		}
		got, err := comp.CompressParts(m, head, tail, n, "session-x-msg-3")
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: CompressParts %+v (%v), Compress %+v (%v)", content, got, err, want, werr)
		}
	})
}

// asciiLen is the code point count of an ASCII string, -1 for any other.
func TestASCIILen(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", strings.Repeat("x", 100), "abcdefg\x80", "\xffabcdefgh", "abcdefghé", "é", strings.Repeat("a", 15) + "\x7f"} {
		want := -1
		if utf8.ValidString(s) && utf8.RuneCountInString(s) == len(s) {
			want = len(s)
		}
		if got := asciiLen(s); got != want {
			t.Errorf("asciiLen(%q) = %d, want %d", s, got, want)
		}
	}
}

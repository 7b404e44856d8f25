package compressor

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/remstore/remstore/models"
)

const hintWithoutKey = "\n\n... [Message truncated - REM LOOKUP  to recover full content] ...\n\n"

// Compress never panics; decompress(compress(m), full) restores m; the cut
// text is never longer than 2T + hint; head and tail are the content's own.
func FuzzCompress(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("é", 401), "e\u0301e\u0301e", "\xff\xfe", "😀😁😂🤣😃", "a\x00b"} {
		f.Add(s, 1, "k")
		f.Add(s, 2, "")
	}
	f.Fuzz(func(t *testing.T, content string, tl int, key string) {
		if tl < 1 || tl > 1000 {
			if _, err := New(tl); err == nil {
				t.Fatalf("New(%d) accepted", tl)
			}
			return
		}
		c, _ := New(tl)
		m := models.HistoryMessage{Role: models.RoleAssistant, Content: content}
		out, err := c.Compress(m, key)
		if !utf8.ValidString(content) {
			if err == nil {
				t.Fatal("invalid UTF-8 accepted")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		n := utf8.RuneCountInString(content)
		if n <= 2*tl {
			if out.Content != content || out.Compressed {
				t.Fatal("short message changed")
			}
			return
		}
		if !out.Compressed || out.OriginalLength != n {
			t.Fatalf("flags: %+v", out)
		}
		limit := 2*tl + utf8.RuneCountInString(hintWithoutKey) + utf8.RuneCountInString(key)
		if key == "" {
			limit = 2*tl + len("\n\n... [Message truncated -  characters omitted] ...\n\n") + 20
		}
		if got := utf8.RuneCountInString(out.Content); got > limit {
			t.Fatalf("compressed length %d > %d", got, limit)
		}
		r := []rune(content)
		if !strings.HasPrefix(out.Content, string(r[:tl])) || !strings.HasSuffix(out.Content, string(r[n-tl:])) {
			t.Fatal("head or tail is not the content's")
		}
		// The viewer reads the hint back with SplitHint: head and tail
		// exactly (unless the content itself quotes a hint's opening).
		if !strings.Contains(content, hintOpen) {
			h, hint, tail, ok := SplitHint(out.Content, key)
			if !ok || h != string(r[:tl]) || tail != string(r[n-tl:]) || !strings.Contains(out.Content, "\n\n"+hint+"\n\n") {
				t.Fatalf("SplitHint(%q) = %q, %q, %q, %v", out.Content, h, hint, tail, ok)
			}
		}
		back := Decompress(out, content)
		if back.Content != m.Content || back.Compressed || back.OriginalLength != 0 || back.EntityKey != "" {
			t.Fatalf("decompress did not restore: %+v", back)
		}
	})
}

// parse(build(id, n)) == (id, n) for ids that keep the key uncut and make a
// well-formed key; every key ParseKey accepts is one BuildKey could make.
func FuzzKeys(f *testing.F) {
	f.Add("550e8400-e29b-41d4-a716-446655440000", 3)
	f.Add("a-msg-5", 0)
	f.Add(strings.Repeat("x", 300), 7)
	f.Add("é", 123456)
	f.Fuzz(func(t *testing.T, id string, n int) {
		if n < 0 || n > 999_999_999 {
			return
		}
		k := BuildKey(id, n)
		if utf8.RuneCountInString(k) > MaxKeyLength && utf8.ValidString(id) {
			t.Fatalf("key longer than %d: %d", MaxKeyLength, utf8.RuneCountInString(k))
		}
		p, err := ParseKey(k)
		if err != nil {
			return // ids with whitespace, control characters or invalid UTF-8 make no usable key
		}
		if p.Raw != k {
			t.Fatalf("Raw = %q, want %q", p.Raw, k)
		}
		if !p.Opaque && k == "session-"+id+"-msg-"+itoa(n) && (p.SessionID != id || p.Index != n) {
			t.Fatalf("parse(build(%q, %d)) = %+v", id, n, p)
		}
		if p.Opaque && utf8.RuneCountInString(k) != MaxKeyLength {
			t.Fatalf("opaque key of length %d", utf8.RuneCountInString(k))
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"REM LOOKUP session-a-msg-1", `"LOOKUP 'session-b-msg-0'"`, "session--msg-", "  ", "LOOKUP", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		if k.Opaque {
			return
		}
		if BuildKey(k.SessionID, k.Index) != k.Raw {
			t.Fatalf("accepted %q but it rebuilds as %q", k.Raw, BuildKey(k.SessionID, k.Index))
		}
	})
}

func itoa(n int) string { return formatInt(n) }

func formatInt(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// CompressParts on the head, tail and length of a content gives exactly what
// Compress gives on the content: the database may cut, the output is the same.
func FuzzCompressParts(f *testing.F) {
	for _, s := range []string{"abcdefghij", "ééééééééé😀😀😀", "e\u0301e\u0301e\u0301e\u0301e\u0301", "line\r\nline\r\nline"} {
		f.Add(s, 2, "session-x-msg-1")
		f.Add(s, 1, "")
	}
	f.Fuzz(func(t *testing.T, content string, tl int, key string) {
		if tl < 1 || tl > 50 || !utf8.ValidString(content) {
			return
		}
		c, _ := New(tl)
		m := models.HistoryMessage{Role: models.RoleAssistant, Content: content}
		want, err := c.Compress(m, key)
		if err != nil || !want.Compressed {
			return
		}
		r := []rune(content)
		got, err := c.CompressParts(models.HistoryMessage{Role: models.RoleAssistant}, string(r[:tl]), string(r[len(r)-tl:]), len(r), key)
		if err != nil {
			t.Fatal(err)
		}
		if got.Content != want.Content || got.OriginalLength != want.OriginalLength || got.EntityKey != want.EntityKey || !got.Compressed {
			t.Fatalf("parts %q\nfull  %q", got.Content, want.Content)
		}
	})
}

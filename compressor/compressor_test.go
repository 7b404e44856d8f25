package compressor

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/remstore/remstore/models"
)

func hintKey(k string) string {
	return "\n\n... [Message truncated - REM LOOKUP " + k + " to recover full content] ...\n\n"
}

func hintN(n string) string {
	return "\n\n... [Message truncated - " + n + " characters omitted] ...\n\n"
}

// Expected strings worked out by hand from SPEC §4: first T code points,
// hint, last T code points; _original_length in code points.
func TestCompressTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		t        int
		role     models.Role
		content  string
		key      string
		want     string // "" = unchanged
		original int
	}{
		{"T1 len3", 1, "assistant", "abc", "k", "a" + hintKey("k") + "c", 3},
		{"T1 len2 = 2T", 1, "assistant", "ab", "k", "", 0},
		{"T2 2T-1", 2, "assistant", "abc", "k", "", 0},
		{"T2 2T", 2, "assistant", "abcd", "k", "", 0},
		{"T2 2T+1", 2, "assistant", "abcde", "k", "ab" + hintKey("k") + "de", 5},
		{"T2 2T+1 no key", 2, "assistant", "abcde", "", "ab" + hintN("1") + "de", 5},
		{"T2 2-byte", 2, "assistant", "éèàùç", "k", "éè" + hintKey("k") + "ùç", 5},
		{"T2 3-byte", 2, "assistant", "日本語テキ", "", "日本" + hintN("1") + "テキ", 5},
		{"T2 4-byte", 2, "assistant", "😀😁😂🤣😃", "k", "😀😁" + hintKey("k") + "🤣😃", 5},
		{"T2 4-byte 2T", 2, "assistant", "😀😁😂🤣", "k", "", 0},
		{"T2 combining", 2, "assistant", "e\u0301e\u0301e", "k", "e\u0301" + hintKey("k") + "\u0301e", 5},
		{"T2 newlines", 2, "assistant", "a\nb\nc", "k", "a\n" + hintKey("k") + "\nc", 5},
		{"T3 omitted 4", 3, "user", "0123456789", "", "012" + hintN("4") + "789", 10},
		{"system never", 1, "system", "abcdef", "k", "", 0},
		{"tool is compressible", 1, "tool", "abc", "k", "a" + hintKey("k") + "c", 3},
		{"T200 401", 200, "assistant", strings.Repeat("a", 200) + "b" + strings.Repeat("c", 200), "session-s-msg-1",
			strings.Repeat("a", 200) + hintKey("session-s-msg-1") + strings.Repeat("c", 200), 401},
		{"T200 400", 200, "assistant", strings.Repeat("a", 400), "k", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.t)
			if err != nil {
				t.Fatal(err)
			}
			in := models.HistoryMessage{Role: tc.role, Content: tc.content}
			got, err := c.Compress(in, tc.key)
			if err != nil {
				t.Fatal(err)
			}
			if in.Content != tc.content {
				t.Fatal("input modified")
			}
			if tc.want == "" {
				if got.Content != tc.content || got.Compressed {
					t.Fatalf("changed a message that must stay: %+v", got)
				}
				return
			}
			if got.Content != tc.want {
				t.Errorf("content\n got %q\nwant %q", got.Content, tc.want)
			}
			if !got.Compressed || got.OriginalLength != tc.original || got.EntityKey != tc.key {
				t.Errorf("flags: compressed=%v original=%d key=%q", got.Compressed, got.OriginalLength, got.EntityKey)
			}
			back := Decompress(got, tc.content)
			if back.Content != tc.content || back.Compressed || back.OriginalLength != 0 || back.EntityKey != "" {
				t.Errorf("decompress: %+v", back)
			}
		})
	}
}

func TestCompressInvalidUTF8(t *testing.T) {
	t.Parallel()
	_, err := Default.Compress(models.HistoryMessage{Role: "assistant", Content: strings.Repeat("a", 500) + "\xff"}, "k")
	if !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("err = %v, want ErrInvalidUTF8", err)
	}
	_, err = Default.CompressHistory("s", []models.HistoryMessage{{Role: "user"}, {Role: "assistant", Content: strings.Repeat("é", 500) + "\xc3"}})
	fe, ok := models.AsFieldError(err)
	if !ok || fe.Index != 1 || fe.Field != "content" {
		t.Fatalf("err = %v, want a FieldError for message 1 content", err)
	}
}

func TestNewRejectsBadT(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, -1, -200, MaxTruncateLength + 1, 4611686018427387904} {
		if _, err := New(n); !errors.Is(err, ErrBadTruncateLength) {
			t.Errorf("New(%d) err = %v", n, err)
		}
	}
}

// Only assistant messages are cut on load (model is left whole, as the peer
// leaves it: its load compares the role to "assistant"); keys come from the
// position.
func TestCompressHistory(t *testing.T) {
	t.Parallel()
	c, _ := New(2)
	in := []models.HistoryMessage{
		{Role: "user", Content: "uuuuuuu"},
		{Role: "assistant", Content: "abcde"},
		{Role: "tool", Content: "ttttttt", ToolCallID: "c"},
		{Role: "system", Content: "sssssss"},
		{Role: "model", Content: "vwxyz"},
		{Role: "assistant", Content: "abcd"},
	}
	out, err := c.CompressHistory("sid", in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"uuuuuuu", "ab" + hintKey("session-sid-msg-1") + "de", "ttttttt", "sssssss",
		"vwxyz", "abcd"}
	for i := range out {
		if out[i].Content != want[i] {
			t.Errorf("%d: got %q want %q", i, out[i].Content, want[i])
		}
	}
	if in[1].Content != "abcde" {
		t.Error("input modified")
	}
}

// Keys of 254, 255 and 256 code points; the cut values come from Python's
// hashlib (the peer's truncate_key), not from this code.
func TestBuildKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		id       string
		n        int
		wantTail string
		wantLen  int
	}{
		{"abc", 3, "session-abc-msg-3", 17},
		{strings.Repeat("x", 240), 0, "x-msg-0", 254},
		{strings.Repeat("x", 241), 0, "x-msg-0", 255},
		{strings.Repeat("x", 242), 0, "x-6d00443e", 255},
		{strings.Repeat("x", 300), 0, "x-6e59bef3", 255},
		{strings.Repeat("é", 300), 12, "é-8d9d5e98", 255},
	}
	for _, tc := range cases {
		k := BuildKey(tc.id, tc.n)
		if !strings.HasSuffix(k, tc.wantTail) || utf8.RuneCountInString(k) != tc.wantLen {
			t.Errorf("BuildKey(len %d, %d) = ...%q (len %d), want suffix %q len %d",
				len(tc.id), tc.n, k[max(0, len(k)-12):], utf8.RuneCountInString(k), tc.wantTail, tc.wantLen)
		}
		if !strings.Contains(tc.wantTail, "msg") && !strings.HasPrefix(k, "session-"+string([]rune(tc.id)[:238])+"-") {
			t.Errorf("cut key does not keep the first 246 code points: %q", k)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	long := BuildKey(strings.Repeat("x", 300), 5)
	ok := []struct {
		in     string
		id     string
		n      int
		opaque bool
	}{
		{"session-abc-msg-3", "abc", 3, false},
		{"  REM LOOKUP session-abc-msg-3  ", "abc", 3, false},
		{"rem lookup session-abc-msg-3", "abc", 3, false},
		{`LOOKUP "session-abc-msg-0"`, "abc", 0, false},
		{`"REM LOOKUP session-abc-msg-10"`, "abc", 10, false},
		{"'session-a-msg-5-msg-7'", "a-msg-5", 7, false},
		{"session-550e8400-e29b-41d4-a716-446655440000-msg-12", "550e8400-e29b-41d4-a716-446655440000", 12, false},
		{long, "", -1, true},
	}
	for _, tc := range ok {
		k, err := ParseKey(tc.in)
		if err != nil {
			t.Errorf("ParseKey(%q): %v", tc.in, err)
			continue
		}
		if k.SessionID != tc.id || k.Index != tc.n || k.Opaque != tc.opaque {
			t.Errorf("ParseKey(%q) = %+v", tc.in, k)
		}
	}
	bad := map[string]string{
		"":                      "empty key",
		"REM LOOKUP ":           "empty key",
		"sess-abc-msg-1":        `must start with "session-"`,
		"session-abc-msg-":      "must have the form",
		"session-abc-msg-x":     "must have the form",
		"session--msg-1":        "must have the form",
		"session-abc-msg-01":    "must have the form",
		"session-abc-msg--1":    "must have the form",
		"session-abc":           "must have the form",
		"session-a b-msg-1":     "whitespace",
		"session-abc-msg-1\x00": "control character",
		"session-\xff-msg-1":    "not valid UTF-8",
		"session-" + strings.Repeat("y", 300) + "-msg-1": "longer than 255",
	}
	for in, why := range bad {
		_, err := ParseKey(in)
		if err == nil || !errors.Is(err, ErrBadKey) || !strings.Contains(err.Error(), why) {
			t.Errorf("ParseKey(%q) err = %v, want %q", in, err, why)
		}
	}
}

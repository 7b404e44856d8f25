package words

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// Hand-worked cases of the rule (doc comment of words.go).
func TestOf(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"Lisbon trip, 3 nights", []string{"lisbon", "trip", "3", "nights"}},
		{"Café CAFE cafe\u0301 ｃａｆｅ", []string{"cafe", "cafe", "cafe", "cafe"}},
		{"Straße Øre ﬁle", []string{"straße", "øre", "file"}},
		{"mail alice@example.com now", []string{"mail", "alice", "example", "com", "now"}},
		{"see https://docs.example.org/a_b?q=1#x", []string{"see", "https", "docs", "example", "org", "a", "b", "q", "1", "x"}},
		{"<script>alert(1)</script>", []string{"script", "alert", "1", "script"}},
		{"I ❤️ 🎉party", []string{"i", "❤", "🎉", "party"}},
		{"", nil},
		{"  ...  ", nil},
	} {
		got := Of(c.in)
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("Of(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// The CJK, Devanagari and number cases spelled out rune by rune, where a
// literal would hide what the rule does.
func TestOfScripts(t *testing.T) {
	// Each Han, Hiragana and Katakana letter a word; the prolonged sound
	// mark ー (U+30FC, a modifier letter) is a letter of Katakana too.
	if got := Of("東京タワー"); !slices.Equal(got, []string{"東", "京", "タ", "ワ", "ー"}) {
		t.Errorf("Of(東京タワー) = %q", got)
	}
	// Devanagari: the virama (Mn) goes, the vowel signs (Mc ा, Mn ि/ु) stay
	// or go by their class, and the word holds together.
	got := Of("नमस्ते")
	if len(got) != 1 || !strings.HasPrefix(got[0], "नमस") {
		t.Errorf("Of(नमस्ते) = %q, want one word", got)
	}
	// NFKD: ½ is 1⁄2 (the fraction slash separates), Ⅻ is XII.
	if got := Of("½ Ⅻ"); !slices.Equal(got, []string{"1", "2", "xii"}) {
		t.Errorf("Of(½ Ⅻ) = %q", got)
	}
}

func TestLongWordsAreCut(t *testing.T) {
	long := strings.Repeat("é", 100) // e and an accent each: the accent goes
	got := Of(long)
	if len(got) != 1 || got[0] != strings.Repeat("e", MaxLen) {
		t.Errorf("Of(100 × é) = %q", got)
	}
	cjkish := strings.Repeat("ж", 40) // 2 bytes each: 32 fit
	if got := Of(cjkish); len(got) != 1 || got[0] != strings.Repeat("ж", 32) {
		t.Errorf("Of(40 × ж) = %q", got)
	}
}

func TestIndexKeepsDistinctWordsAnywhere(t *testing.T) {
	text := strings.Repeat("filler ", 30_000) + "needle" // past 100,000 characters
	if got := Index(text); got != "filler needle" {
		t.Errorf("Index = %q", got)
	}
	var b strings.Builder
	for i := range MaxDistinct + 5 {
		b.WriteString("w" + strconv.Itoa(i) + " ")
	}
	if n := len(strings.Fields(Index(b.String()))); n != MaxDistinct {
		t.Errorf("Index kept %d words, want %d", n, MaxDistinct)
	}
}

func TestQuery(t *testing.T) {
	if got := Query("Lisbon lisbon TRIP a b c", 3); !slices.Equal(got, []string{"lisbon", "trip", "a"}) {
		t.Errorf("Query = %q", got)
	}
	for _, c := range []struct {
		text, q string
		want    bool
	}{
		{"Our trip to Lisbon", "lisb", true},
		{"Our trip to Lisbon", "lisbon trip", true},
		{"Our trip to Lisbon", "porto", false},
		{"café au lait", "CAFE", true},
		{"cafe au lait", "café", true},
		{"write to alice@example.com", "alice@example.com", true},
		{"<script>alert(1)</script>", "script", true},
		{"東京タワー", "京タ", true},
		{"🎉 done", "🎉", true},
		{"done", "🎉", false},
		{"hello", "", false},
	} {
		if got := Matches(c.text, Query(c.q, 0)); got != c.want {
			t.Errorf("Matches(%q, %q) = %v, want %v", c.text, c.q, got, c.want)
		}
	}
}

func TestFirst(t *testing.T) {
	for _, c := range []struct {
		text, q string
		want    int
	}{
		{"Our trip to Lisbon", "lisb", 12},
		{"Un Café, s'il vous plaît", "cafe", 3},
		{"x ｃａｆｅ", "cafe", 2},
		{"mail: alice@example.com", "example", 12},
		{"nothing here", "lisbon", -1},
		{"東京タワー", "タ", 6},
	} {
		if got := First(c.text, Query(c.q, 0)); got != c.want {
			t.Errorf("First(%q, %q) = %d, want %d", c.text, c.q, got, c.want)
		}
	}
}

// FuzzWords: any text splits without panic into non-empty valid words of at
// most MaxLen bytes, each of which splits to itself (so a query of a word
// the index holds asks for exactly that word), and the text is found by
// each of its first words.
func FuzzWords(f *testing.F) {
	for _, s := range []string{"Café ｃａｆｅ", "alice@example.com", "<b>x</b>", "東京タワー", "I ❤️ 🎉", "नमस्ते", "İstanbul ǅ K Å", "\xff\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws := Of(s)
		for _, w := range ws {
			if w == "" || len(w) > MaxLen || !utf8.ValidString(w) || strings.ContainsRune(w, ' ') {
				t.Fatalf("Of(%q) has word %q", s, w)
			}
			if again := Of(w); len(again) != 1 || again[0] != w {
				t.Fatalf("word %q of %q splits to %q", w, s, again)
			}
		}
		EachAt(s, func(w string, at int) bool {
			if at < 0 || at >= len(s) {
				t.Fatalf("word %q of %q at %d", w, s, at)
			}
			return true
		})
		for _, w := range ws[:min(len(ws), 5)] {
			if !Matches(s, []string{w}) {
				t.Fatalf("%q not found by its word %q", s, w)
			}
		}
	})
}

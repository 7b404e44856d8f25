package words

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The rule, in full:
//   - text is decomposed (NFKD: full-width forms, ligatures and the like
//     become their plain letters), accents and other combining marks are
//     dropped, letters are lower-cased: "Café", "CAFE" and "ｃａｆｅ" are
//     the word "cafe";
//   - a word is a run of letters and digits; anything else separates words,
//     so an e-mail address, a URL or markup is the words inside it
//     ("<script>" is "script", "alice@example.com" is "alice", "example",
//     "com"); a spacing mark (Devanagari's vowel signs) is part of its word;
//   - a Han, Hiragana or Katakana character, and a symbol such as an emoji,
//     is a word by itself (these scripts do not put spaces between words);
//   - a word is at most MaxLen bytes: a longer one is cut at a character
//     boundary, the same way in text and in a query;
//   - a message is searchable by its first MaxDistinct different words,
//     wherever they are in the text (no limit of characters).

// Limits of the rule.
const (
	MaxLen      = 64     // bytes of one word
	MaxDistinct = 10_000 // different words of one message in the index
)

// class is what a rune is to the rule.
type class int

const (
	sep   class = iota // separates words
	part               // part of a word
	alone              // a word by itself
)

func classOf(r rune) class {
	switch {
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
		if unicode.IsLetter(r) {
			return alone
		}
		return sep // the prolonged sound mark and iteration marks join nothing
	case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.In(r, unicode.No, unicode.Nl, unicode.Mc):
		return part
	case unicode.Is(unicode.So, r):
		return alone
	}
	return sep
}

// Each calls f with each word of text in order (repeats included) until f
// returns false.
func Each(text string, f func(w string) bool) {
	EachAt(text, func(w string, _ int) bool { return f(w) })
}

// EachAt is Each with the byte offset in text where each word begins.
func EachAt(text string, f func(w string, at int) bool) {
	var b strings.Builder
	start := 0
	flush := func() bool {
		if b.Len() == 0 {
			return true
		}
		w := b.String()
		b.Reset()
		return f(w, start)
	}
	var it norm.Iter
	it.InitString(norm.NFKD, text)
	for !it.Done() {
		at := it.Pos() // where this segment (a character and its marks) begins
		seg := it.Next()
		for len(seg) > 0 {
			r, n := utf8.DecodeRune(seg)
			seg = seg[n:]
			if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
				continue // the accent of a decomposed letter; a variation selector
			}
			switch classOf(r) {
			case sep:
				if !flush() {
					return
				}
			case alone:
				if !flush() {
					return
				}
				var s [utf8.UTFMax]byte
				if !f(string(s[:utf8.EncodeRune(s[:], unicode.ToLower(r))]), at) {
					return
				}
			case part:
				if b.Len() == 0 {
					start = at
				}
				r = unicode.ToLower(r)
				if b.Len()+utf8.RuneLen(r) <= MaxLen {
					b.WriteRune(r)
				}
			}
		}
	}
	flush()
}

// Of is the words of text in order, repeats included.
func Of(text string) []string {
	var out []string
	Each(text, func(w string) bool { out = append(out, w); return true })
	return out
}

// Query is the words of a search, at most max of them (0: no limit),
// repeats dropped: a message matches when it has every one, each as a
// word or the start of one.
func Query(q string, max int) []string {
	var out []string
	seen := map[string]bool{}
	Each(q, func(w string) bool {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
		return max == 0 || len(out) < max
	})
	return out
}

// Index is the different words text is found by: the first MaxDistinct,
// in order of first appearance, joined by single spaces (no word holds a
// space). This is what every database's index keeps.
func Index(text string) string {
	var b strings.Builder
	seen := map[string]bool{}
	Each(text, func(w string) bool {
		if seen[w] {
			return true
		}
		seen[w] = true
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		return len(seen) < MaxDistinct
	})
	return b.String()
}

// First is the byte offset in text of its first word that a query word
// is, or begins; -1 if none.
func First(text string, query []string) int {
	at := -1
	EachAt(text, func(w string, i int) bool {
		for _, q := range query {
			if strings.HasPrefix(w, q) {
				at = i
				return false
			}
		}
		return true
	})
	return at
}

// Matches reports whether text is found by query's words under the rule:
// each query word is a word of Index(text) or the start of one. It is the
// rule's meaning, the oracle the databases' indexes are tested against.
func Matches(text string, query []string) bool {
	if len(query) == 0 {
		return false
	}
	have := strings.Fields(Index(text))
	for _, q := range query {
		found := false
		for _, w := range have {
			if strings.HasPrefix(w, q) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

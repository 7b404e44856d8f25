package sessionstore_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/words"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// searchCorpus is text where the three rules of before disagreed (issue
// 41): accents, case, e-mail addresses, URLs, markup, CJK, emoji, and a
// word past the first 100,000 characters.
var searchCorpus = []string{
	0:  "Un café crème, s'il vous plaît",
	1:  "CAFE OPENS AT NINE",
	2:  "write to alice.smith@example.com about the invoice",
	3:  "docs at https://docs.example.org/guide?page=2#setup",
	4:  `<script>alert("x")</script> was in the page`,
	5:  "東京タワーに行きました",
	6:  "party 🎉 tonight",
	7:  strings.Repeat("filler ", 20_000) + "needle at the end",
	8:  "Straße und Fußgänger",
	9:  "ｆｕｌｌｗｉｄｔｈ letters",
	10: "naïve coöperation",
	11: "ship it 🚢🎉",
}

// The hits each query must give, by corpus index, written by hand from the
// rule in internal/words (and checked against words.Matches below).
var corpusQueries = []struct {
	q    string
	want []int
}{
	{"cafe", []int{0, 1}},
	{"CAFÉ", []int{0, 1}},
	{"creme", []int{0}},
	{"alice@example.com", []int{2}},
	{"example", []int{2, 3}},
	{"smith", []int{2}},
	{"docs.example.org", []int{3}},
	{"setup", []int{3}},
	{"script", []int{4}},
	{"<script>", []int{4}},
	{"東京", []int{5}},
	{"タワー", []int{5}},
	{"🎉", []int{6, 11}},
	{"🎉 party", []int{6}},
	{"needle", []int{7}},
	{"fullwidth", []int{9}},
	{"FULL", []int{9}},
	{"naive cooperation", []int{10}},
	{"strasse", nil}, // ß is its own letter: the rule does not spell it out
	{"straße", []int{8}},
	{"fußganger", []int{8}},
	{"nothing", nil},
}

// TestSearchCorpus: the same words find the same messages on every
// database (PostgreSQL, SQLite, and Citus and PgBouncer where CI runs
// them), as the hand-written table says.
func TestSearchCorpus(t *testing.T) {
	t.Parallel()
	// The table agrees with the rule itself, so a wrong row is caught here
	// and not blamed on a database.
	for _, c := range corpusQueries {
		var got []int
		for i, text := range searchCorpus {
			if words.Matches(text, words.Query(c.q, 16)) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("rule: %q finds %v, table says %v", c.q, got, c.want)
		}
	}
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("corpus")
		// One message per session: a hit's session names its corpus index.
		for i, text := range searchCorpus {
			store(t, s, "c"+strings.Repeat("x", i), models.HistoryMessage{Role: "user", Content: text})
		}
		for _, c := range corpusQueries {
			r, err := s.SearchPage(ctx, sessionstore.SearchOptions{Query: c.q, Limit: 50})
			if err != nil {
				t.Fatalf("%q: %v", c.q, err)
			}
			var got []int
			for _, h := range r.Hits {
				got = append(got, len(h.SessionName)-1)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("%q: hits %v, want %v", c.q, got, c.want)
			}
			if r.Indexing {
				t.Errorf("%q: still indexing after the search caught up", c.q)
			}
		}
	})
}

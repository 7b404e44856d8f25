package sessionstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Every hit's Index is its place in a full load (no compression, compaction
// ignored), counted apart here, whatever put the rows there: several
// sessions, removed rows, equal created_at (imported rows), another
// tenant's rows inside the session, a compaction, and each kind of search
// that gives a position (content, tool, key).
func TestSearchPositionsMatchLoad(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			dbtest.WithoutTenantGuard(t, db)
			mk := func(user string) *sessionstore.Store {
				s, err := sessionstore.New(db, sessionstore.Options{UserID: user})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := mk("A")
			n := 0
			put := func(key string, role string, k int) {
				var ms []models.HistoryMessage
				for range k {
					n++
					m := msg(role, fmt.Sprintf("needle %d", n))
					if role == "tool" {
						m.ToolCallID, m.ToolName = fmt.Sprintf("c%d", n), "needletool"
					}
					ms = append(ms, m)
				}
				store(t, s, key, ms...)
			}
			pop := func(key string) {
				if _, ok, err := s.PopMessage(ctx, key); err != nil || !ok {
					t.Fatalf("pop %s: %v %v", key, ok, err)
				}
			}
			put("a", "assistant", 4)
			pop("a")
			put("b", "assistant", 3)
			put("a", "assistant", 3)
			pop("a")
			put("a", "user", 2)
			put("b", "assistant", 2)
			// Imported rows: equal created_at, ids in no order of writing.
			same := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
			imp, err := sessionstore.SessionUUID("A", "imp")
			if err != nil {
				t.Fatal(err)
			}
			var pm []dbtest.PeerMessage
			for range 12 {
				n++
				pm = append(pm, dbtest.PeerMessage{Role: "assistant", Content: fmt.Sprintf("needle %d", n)})
			}
			if _, err := dbtest.PeerStore(ctx, db, imp, "A", pm, func(int) time.Time { return same }); err != nil {
				t.Fatal(err)
			}
			// Another tenant's rows inside A's session "a", between A's.
			sa, _ := sessionstore.SessionUUID("A", "a")
			if _, err := dbtest.PeerStore(ctx, db, sa, "B", []dbtest.PeerMessage{{Role: "assistant", Content: "needle of B"}, {Role: "user", Content: "needle of B too"}},
				func(i int) time.Time { return time.Now().UTC() }); err != nil {
				t.Fatal(err)
			}
			put("a", "assistant", 2)
			// A compacted session.
			put("c", "assistant", 5)
			if _, err := s.Compact(ctx, "c", func(context.Context, []models.HistoryMessage) (string, error) { return "summary needle", nil },
				sessionstore.CompactOptions{KeepLast: 2}); err != nil {
				t.Fatal(err)
			}
			put("c", "assistant", 2)
			put("t", "tool", 3)

			loads := map[string][]models.HistoryMessage{}
			load := func(name string) []models.HistoryMessage {
				if l, ok := loads[name]; ok {
					return l
				}
				l, err := s.Load(ctx, name, sessionstore.LoadOptions{NoCompress: true, IgnoreCompaction: true})
				if err != nil {
					t.Fatal(err)
				}
				loads[name] = l
				return l
			}
			check := func(o sessionstore.SearchOptions, want int) {
				if _, err := s.CatchUpSearch(ctx, &o); err != nil {
					t.Fatal(err)
				}
				hits, err := s.Search(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				if want >= 0 && len(hits) != want {
					t.Errorf("%s %q: %d hits, want %d", o.In, o.Query, len(hits), want)
				}
				for _, h := range hits {
					if strings.Contains(h.Snippet, " of B") {
						t.Errorf("%s %q: another tenant's row found: %+v", o.In, o.Query, h)
					}
					l := load(h.SessionName)
					at := -1
					for i, m := range l {
						if m.Content == h.Snippet {
							at = i
						}
					}
					if at != h.Index {
						t.Errorf("%s %q: hit %q in %s at %d, the load has it at %d", o.In, o.Query, h.Snippet, h.SessionName, h.Index, at)
					}
				}
			}
			check(sessionstore.SearchOptions{Query: "needle", Limit: 100}, -1)
			check(sessionstore.SearchOptions{Query: "needle", Limit: 3}, 3)
			check(sessionstore.SearchOptions{Query: "needle", Limit: 5, Offset: 4}, 5)
			check(sessionstore.SearchOptions{Query: "needletool", In: sessionstore.SearchTool, Limit: 100}, 3)
			// Key search: the last answer of "a", behind two removed rows.
			a := load("a")
			last := a[len(a)-1]
			hits, err := s.Search(ctx, sessionstore.SearchOptions{Query: last.Content, Limit: 1})
			if err != nil || len(hits) != 1 || hits[0].Key == "" {
				t.Fatalf("no key for %q: %+v %v", last.Content, hits, err)
			}
			key := hits[0].Key
			check(sessionstore.SearchOptions{Query: key, In: sessionstore.SearchKey, Limit: 10}, 1)
			// B's own rows inside A's session: B finds them, and nothing of A's session.
			if _, err := s.UpdateSession(ctx, "a", sessionstore.SessionUpdate{AgentName: models.Ptr("A-secret-agent")}); err != nil {
				t.Fatal(err)
			}
			b := mk("B")
			o := sessionstore.SearchOptions{Query: "needle", Limit: 10}
			if _, err := b.CatchUpSearch(ctx, &o); err != nil {
				t.Fatal(err)
			}
			bh, err := b.Search(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range bh {
				t.Logf("B's hit: %+v", h)
				if h.SessionName == "a" || h.AgentName != "" {
					t.Errorf("B's hit names A's session: %+v", h)
				}
			}
		})
	}
}

// Hit positions beside writers appending to and popping from the same
// sessions: a hit still in a load after its search is where the search
// said (pops take the last row, writes append, so a row that stayed
// never moved).
func TestSearchPositionsBesideWriters(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			mk := func() *sessionstore.Store {
				s, err := sessionstore.New(db, sessionstore.Options{UserID: "A"})
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := mk()
			stop := make(chan struct{})
			done := make(chan struct{})
			var werr error
			go func() {
				defer close(done)
				w := mk()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					key := []string{"x", "y", "z"}[i%3]
					if _, err := w.Store(ctx, key, []models.HistoryMessage{msg("assistant", fmt.Sprintf("needle w%d", i)), msg("user", fmt.Sprintf("hay w%d", i))}, sessionstore.StoreOptions{}); err != nil {
						werr = err
						return
					}
					if i%3 == 1 {
						if _, _, err := w.PopMessage(ctx, key); err != nil {
							werr = err
							return
						}
						if _, _, err := w.PopMessage(ctx, key); err != nil {
							werr = err
							return
						}
					}
				}
			}()
			deadline := time.Now().Add(3 * time.Second)
			checked := 0
			for time.Now().Before(deadline) {
				o := sessionstore.SearchOptions{Query: "needle", Limit: 40}
				if _, err := s.CatchUpSearch(ctx, &o); err != nil {
					t.Fatal(err)
				}
				hits, err := s.Search(ctx, o)
				if err != nil {
					t.Fatal(err)
				}
				loads := map[string][]models.HistoryMessage{}
				for _, h := range hits {
					l, ok := loads[h.SessionName]
					if !ok {
						if l, err = s.Load(ctx, h.SessionName, sessionstore.LoadOptions{NoCompress: true, IgnoreCompaction: true}); err != nil {
							t.Fatal(err)
						}
						loads[h.SessionName] = l
					}
					for i, m := range l {
						if m.Content == h.Snippet {
							checked++
							if i != h.Index {
								t.Errorf("hit %q in %s at %d, the load has it at %d", h.Snippet, h.SessionName, h.Index, i)
							}
						}
					}
				}
			}
			close(stop)
			<-done
			if werr != nil {
				t.Fatal(werr)
			}
			t.Logf("%d hits checked", checked)
		})
	}
}

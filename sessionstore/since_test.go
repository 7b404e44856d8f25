package sessionstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 45: a load since a time reads the rows after it (an index range
// from there, plus the session's last row), and answers as before: the
// messages created after it, and the session's last live message for a
// guard even when none is newer. Rows one second apart; since at a row, just
// after it, before all and after all, on every database.
func TestSinceReadsFromItsTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			clock := base
			s, err := sessionstore.New(d.New(t), sessionstore.Options{UserID: "alice", Now: func() time.Time { return clock }})
			if err != nil {
				t.Fatal(err)
			}
			const n = 6
			for i := range n {
				clock = base.Add(time.Duration(i) * time.Second)
				if _, err := s.Store(ctx, "chat", []models.HistoryMessage{msg("user", fmt.Sprintf("m%d", i))}, sessionstore.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			var last string
			if _, err := s.Load(ctx, "chat", sessionstore.LoadOptions{OnLast: func(l string) { last = l }}); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				since time.Time
				first int // the first message after since
			}{
				{base.Add(-time.Hour), 0},
				{base, 1},
				{base.Add(2 * time.Second), 3},
				{base.Add(2*time.Second + time.Microsecond/2), 3},
				{base.Add(2*time.Second - time.Microsecond), 2},
				{base.Add(5 * time.Second), n},
				{base.Add(time.Hour), n},
			} {
				got := ""
				h, err := s.Load(ctx, "chat", sessionstore.LoadOptions{Since: tc.since, OnLast: func(l string) { got = l }})
				if err != nil {
					t.Fatal(err)
				}
				if len(h) != n-tc.first {
					t.Fatalf("since %v: %d messages, want %d", tc.since, len(h), n-tc.first)
				}
				for j, m := range h {
					if want := fmt.Sprintf("m%d", tc.first+j); m.Content != want {
						t.Fatalf("since %v: message %d is %q, want %q", tc.since, j, m.Content, want)
					}
				}
				if got != last {
					t.Fatalf("since %v: last message %q, want %q (the session's, newer or not)", tc.since, got, last)
				}
			}
		})
	}
}

// A load since a time keeps tool pairs whole as a load of the last N does,
// by the same rule: a tool result at the start of the window, whose call
// was stored before it, is left out with it. The oracle is the full load
// cut by hand at each message's time, for a session only remstore wrote
// (the window read as an index range) and one with the Python service's
// rows (every row read), on every database.
func TestSinceKeepsToolPairs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
		clock := base
		s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", Now: func() time.Time { return clock }})
		if err != nil {
			t.Fatal(err)
		}
		result := func(id string) models.HistoryMessage {
			r := msg("tool", "result "+id)
			r.ToolCallID, r.ToolName = id, "search"
			return r
		}
		call := msg("assistant", "")
		call.ToolCalls = []models.ToolCall{{ID: "c1", Name: "search", Arguments: `{}`}, {ID: "c2", Name: "search", Arguments: `{}`}}
		// One store a second, as an agent stores a call, then each result
		// once its tool has run.
		turns := [][]models.HistoryMessage{
			{msg("user", "q1")}, {call}, {result("c1")}, {result("c2")}, {msg("assistant", "answer")},
			{msg("user", "q2")}, {result("c9")}, {msg("assistant", "end")},
		}
		peer := uuid.New()
		if _, err := dbtest.PeerStore(ctx, db, peer, "alice", []dbtest.PeerMessage{{Role: "user", Content: "from the peer"}},
			func(int) time.Time { return base.Add(-time.Minute) }); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"mine", peer.String()} {
			for i, batch := range turns {
				clock = base.Add(time.Duration(i) * time.Second)
				if _, err := s.Store(ctx, key, batch, sessionstore.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			full, err := s.Load(ctx, key, sessionstore.LoadOptions{Extras: true})
			if err != nil {
				t.Fatal(err)
			}
			for i, m := range full {
				since, err := time.Parse(time.RFC3339Nano, *m.Timestamp)
				if err != nil {
					t.Fatal(err)
				}
				want := full[i+1:]
				for len(want) > 0 && want[0].Role == models.RoleTool {
					want = want[1:]
				}
				got, err := s.Load(ctx, key, sessionstore.LoadOptions{Since: since, Extras: true})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s since message %d (%s): %d messages, want %d: %v", key, i, m.Content, len(got), len(want), got)
				}
				for j := range got {
					if got[j].Content != want[j].Content {
						t.Fatalf("%s since message %d: message %d is %q, want %q", key, i, j, got[j].Content, want[j].Content)
					}
				}
				for _, before := range full[:len(full)-len(got)] {
					for _, c := range before.ToolCalls {
						for _, g := range got {
							if g.Role == models.RoleTool && g.ToolCallID == c.ID {
								t.Fatalf("%s since message %d: result %s in the window, its call before it", key, i, c.ID)
							}
						}
					}
				}
			}
		}
	})
}

package sessionstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
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
				if _, err := s.StoreMessages(ctx, "chat", []models.HistoryMessage{msg("user", fmt.Sprintf("m%d", i))}, ""); err != nil {
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

package sessionstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// A compacted session only remstore wrote loads from its summary's row and
// its first kept row by index ranges, not by a count and offsets over the
// rows the summary covers: the history (and the last live message a guard
// names) must be exactly what the load by position gives, on every shape of
// compacted session — summaries of summaries, removed rows before, at and
// after the boundary, a summary removed, rows stored while the summarizer
// ran, nothing kept, a fork — with every option on top.
func TestCompactedLoadByRange(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, db := b.open(t, nil)
			s := mk("A")
			old := sessionstore.ByPosition(s)
			same := func(t *testing.T, key string, ranged bool) {
				t.Helper()
				if got, err := sessionstore.LoadsByRange(s, key, sessionstore.LoadOptions{}); err != nil || got != ranged {
					t.Fatalf("%s: loads by range %v (%v), want %v", key, got, err, ranged)
				}
				if got, _ := sessionstore.LoadsByRange(old, key, sessionstore.LoadOptions{}); got {
					t.Fatalf("%s: the load by position loads by range", key)
				}
				all, err := s.Load(ctx, key, sessionstore.LoadOptions{IgnoreCompaction: true})
				if err != nil || len(all) == 0 {
					t.Fatalf("%s: %v", key, err)
				}
				opts := []sessionstore.LoadOptions{{}, {NoCompress: true}, {Extras: true}, {Sources: true}, {IgnoreCompaction: true},
					{LastN: 1}, {LastN: 3}, {LastN: 1000}, {LastN: 2, Extras: true}}
				for _, i := range []int{0, len(all) / 2, len(all) - 2} {
					if i >= 0 && all[i].Timestamp != nil {
						at, err := models.ParseTimestamp(*all[i].Timestamp)
						if err != nil {
							t.Fatal(err)
						}
						opts = append(opts, sessionstore.LoadOptions{Since: at}, sessionstore.LoadOptions{Since: at, Extras: true})
					}
				}
				for _, o := range opts {
					var lastNew, lastOld string
					o.OnLast = func(l string) { lastNew = l }
					got, err := s.Load(ctx, key, o)
					if err != nil {
						t.Fatalf("%s %+v: %v", key, o, err)
					}
					o.OnLast = func(l string) { lastOld = l }
					want, err := old.Load(ctx, key, o)
					if err != nil {
						t.Fatalf("%s %+v by position: %v", key, o, err)
					}
					if g, w := historyJSON(t, got), historyJSON(t, want); g != w || lastNew != lastOld {
						t.Fatalf("%s %+v: by range\n%s\nlast %s\nby position\n%s\nlast %s", key, o, g, lastNew, w, lastOld)
					}
				}
			}
			long := strings.Repeat("detail ", 10)
			turn := func(i int) []models.HistoryMessage {
				return []models.HistoryMessage{msg("user", fmt.Sprintf("q%d", i)), msg("assistant", fmt.Sprintf("calling %d", i)),
					{Role: "tool", Content: fmt.Sprintf(`{"r":%d}`, i), ToolCallID: fmt.Sprintf("c%d", i), ToolName: "t"},
					msg("assistant", fmt.Sprintf("%s%d", long, i))}
			}
			var keys = map[string][]string{}
			put := func(key string, from, to int) {
				t.Helper()
				for i := from; i < to; i++ {
					keys[key] = append(keys[key], store(t, s, key, turn(i)...).Keys...)
				}
			}
			compact := func(key string, keep int) {
				t.Helper()
				if _, err := s.Compact(ctx, key, sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: keep}); err != nil {
					t.Fatalf("compact %s keeping %d: %v", key, keep, err)
				}
			}
			remove := func(key string, n int) { // soft-deletes the n-th row stored into key
				t.Helper()
				if _, err := db.ExecContext(ctx, "UPDATE messages SET deleted_at = ? WHERE metadata->>'entity_key' = ?",
					time.Now().UTC(), keys[key][n]); err != nil {
					t.Fatal(err)
				}
			}

			put("plain", 0, 5)
			compact("plain", 4)
			same(t, "plain", true)

			// Summaries of summaries: the first one inside the second's kept
			// part, then covered by a third.
			put("nested", 0, 4)
			compact("nested", 3)
			put("nested", 4, 6)
			compact("nested", 10)
			same(t, "nested", true)
			put("nested", 6, 7)
			compact("nested", 2)
			same(t, "nested", true)
			// The last summary removed: the one before it is the last live one.
			if _, ok, err := s.PopMessage(ctx, "nested"); err != nil || !ok {
				t.Fatalf("pop: %v %v", ok, err)
			}
			same(t, "nested", true)

			// Removed rows before the boundary, at it and after it.
			put("removed", 0, 6)
			remove("removed", 3)
			remove("removed", 17)
			compact("removed", 7)
			same(t, "removed", true)
			remove("removed", 16) // the first row kept
			remove("removed", 20)
			same(t, "removed", true)
			put("removed", 6, 7)
			same(t, "removed", true)

			// Nothing kept: the summary is the first row it leaves shown.
			put("none", 0, 3)
			compact("none", 0)
			same(t, "none", true)
			put("none", 3, 4)
			same(t, "none", true)

			// Rows stored while the summarizer ran: after the boundary and
			// before the summary, shown after it.
			put("during", 0, 3)
			if _, err := s.Compact(ctx, "during", func(ctx context.Context, msgs []models.HistoryMessage) (string, error) {
				put("during", 3, 4)
				return sessionstore.DeterministicSummary(ctx, msgs)
			}, sessionstore.CompactOptions{KeepLast: 2}); err != nil {
				t.Fatal(err)
			}
			same(t, "during", true)

			// A fork maps the summary's boundary to its own positions.
			info, err := s.Fork(ctx, "removed", sessionstore.ForkOptions{NewSessionKey: "forked"})
			if err != nil {
				t.Fatal(err)
			}
			same(t, info.Name, true)

			// The peer's rows: loaded by position, as before.
			peer := uuid.New()
			base := time.Now().Add(-time.Hour)
			if _, err := dbtest.PeerStore(ctx, db, peer, "A", []dbtest.PeerMessage{{Role: "user", Content: "peer question"},
				{Role: "assistant", Content: "peer answer " + long}}, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
				t.Fatal(err)
			}
			put(peer.String(), 0, 3)
			compact(peer.String(), 3)
			same(t, peer.String(), false)
		})
	}
}

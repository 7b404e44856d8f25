package sessionstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
)

// countingDriver counts the statements a store sends through its driver
// (reads and writes alike).
type countingDriver struct {
	driver
	n *atomic.Int64
}

func (c countingDriver) eachRow(ctx context.Context, db conn, q rowsArgs, fn func(storedRow) error) error {
	c.n.Add(1)
	return c.driver.eachRow(ctx, db, q, fn)
}

func (c countingDriver) queryRow(ctx context.Context, db conn, query string, args []any, dest ...any) error {
	c.n.Add(1)
	return c.driver.queryRow(ctx, db, query, args, dest...)
}

// A compacted session only remstore wrote loads in one statement, as an
// uncompacted one does: the statement finds the last summary and the row it
// leaves shown first (by its stored key) and reads the index range from
// there, the summary handed out first (issue 57: four round trips made a
// compacted 1,000,000-message load 4.2x a 20-message one). A session
// holding the peer's rows, or a load by position, still plans first; every
// way gives the history the load by position gives (TestCompactedLoadByRange
// checks the shapes).
func TestCompactedLoadIsOneStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, d := range dbtest.Dialects[:2] {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			s, err := New(db, Options{UserID: "A"})
			if err != nil {
				t.Fatal(err)
			}
			var n atomic.Int64
			s.drv = countingDriver{s.drv, &n}
			msgs := make([]models.HistoryMessage, 30)
			for i := range msgs {
				msgs[i] = models.HistoryMessage{Role: models.RoleUser, Content: fmt.Sprint(i)}
			}
			if _, err := s.Store(ctx, "x", msgs, StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Compact(ctx, "x", DeterministicSummary, CompactOptions{KeepLast: 5}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Store(ctx, "x", msgs[:2], StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			load := func(s *Store, o LoadOptions) ([]models.HistoryMessage, int64) {
				t.Helper()
				n.Store(0)
				got, err := s.Load(ctx, "x", o)
				if err != nil {
					t.Fatal(err)
				}
				return got, n.Load()
			}
			got, statements := load(s, LoadOptions{})
			if statements != 1 {
				t.Errorf("a compacted load sent %d statements, want 1", statements)
			}
			if len(got) != 8 || !strings.HasPrefix(got[0].Content, "Summary of 25 earlier messages:") || got[1].Content != "25" || got[7].Content != "1" {
				t.Fatalf("compacted load: %d messages: %+v", len(got), got)
			}
			want, _ := load(ByPosition(s), LoadOptions{})
			if g, w := asJSON(t, got), asJSON(t, want); g != w {
				t.Fatalf("one statement:\n%s\nby position:\n%s", g, w)
			}
			if all, statements := load(s, LoadOptions{IgnoreCompaction: true}); len(all) != 33 || statements != 1 {
				t.Fatalf("a load ignoring compaction: %d messages in %d statements", len(all), statements)
			}
			// A load by position, or one the window of LastN starts, plans first.
			if _, statements := load(ByPosition(s), LoadOptions{}); statements < 2 {
				t.Fatalf("a load by position sent %d statements", statements)
			}
			if _, statements := load(s, LoadOptions{LastN: 3}); statements < 2 {
				t.Fatalf("a compacted load of the last 3 sent %d statements", statements)
			}
		})
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

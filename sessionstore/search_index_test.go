package sessionstore_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// The index follows every write, whoever makes it, on every database: a
// store, another writer's row, a changed content, a hard delete. On
// PostgreSQL what the writes noted is indexed by IndexSearch (serve's
// loop) or by the search itself; on SQLite in the write's transaction.
func TestSearchIndexFollowsWrites(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, db := b.open(t, nil)
			s := mk("ix")
			count := func(q string) int {
				t.Helper()
				r, err := s.SearchPage(ctx, sessionstore.SearchOptions{Query: q})
				if err != nil {
					t.Fatalf("%q: %v", q, err)
				}
				return len(r.Hits)
			}
			res := store(t, s, "one", models.HistoryMessage{Role: "user", Content: "an okapi in the garden"})
			// The indexer, as serve runs it, empties the queue.
			r, err := sessionstore.IndexSearch(ctx, db, 0)
			if err != nil || r.Pending {
				t.Fatalf("IndexSearch: %+v %v", r, err)
			}
			if db.Postgres() {
				if r.Indexed < 1 {
					t.Errorf("IndexSearch indexed %d messages, want the stored one", r.Indexed)
				}
				var waiting int
				if err := db.NewRaw("SELECT count(*) FROM "+migrations.SearchQueueTable).Scan(ctx, &waiting); err != nil || waiting != 0 {
					t.Errorf("queue after IndexSearch: %d %v", waiting, err)
				}
			}
			if n := count("okapi"); n != 1 {
				t.Fatalf("okapi: %d hits", n)
			}
			// Another writer (the Python service's shape): found at the next
			// search, which indexes what waits first.
			sid := uuid.New()
			if _, err := dbtest.PeerStore(ctx, db, sid, "ix", []dbtest.PeerMessage{{Role: "user", Content: "a quokka from the peer"}},
				func(int) time.Time { return time.Now() }); err != nil {
				t.Fatal(err)
			}
			if n := count("quokka"); n != 1 {
				t.Errorf("quokka (another writer's row): %d hits", n)
			}
			// A content changed in place: found by its new words only.
			id := res.IDs[0]
			if _, err := db.ExecContext(ctx, "UPDATE messages SET content = 'a narwhal now' WHERE id = ?", id.String()); err != nil {
				t.Fatal(err)
			}
			if o, n := count("okapi"), count("narwhal"); o != 0 || n != 1 {
				t.Errorf("after the update: okapi %d, narwhal %d hits", o, n)
			}
			// A row deleted outright leaves no word behind.
			if _, err := db.ExecContext(ctx, "DELETE FROM messages WHERE id = ?", id.String()); err != nil {
				t.Fatal(err)
			}
			if n := count("narwhal"); n != 0 {
				t.Errorf("after the delete: narwhal %d hits", n)
			}
			if db.Postgres() {
				var docs int
				if err := db.NewRaw("SELECT count(*) FROM "+migrations.SearchDocsTable+" WHERE message_id = ?", id.String()).Scan(ctx, &docs); err != nil || docs != 0 {
					t.Errorf("the deleted message's words: %d rows %v", docs, err)
				}
			}
		})
	}
}

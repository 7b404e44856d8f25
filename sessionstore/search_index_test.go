package sessionstore_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
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

// The indexer's lock is per queue table: another schema's indexer at work
// does not stop this one (two test schemas in one database made searches
// miss what was just stored); and a search waits for its own schema's
// other indexer, within its catch-up bound, then finds what was stored.
func TestIndexerLockIsPerSchemaAndWaited(t *testing.T) {
	t.Parallel()
	a, b := dbtest.NewPostgres(t), dbtest.NewPostgres(t)
	sb, _ := sessionstore.New(b, sessionstore.Options{UserID: "lk"})
	hold := func(db *repository.DB, d time.Duration) {
		t.Helper()
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got bool
		if err := tx.QueryRowContext(ctx, "SELECT pg_try_advisory_xact_lock(?, '"+migrations.SearchQueueTable+"'::regclass::oid::int4)", 0x72656d5f).Scan(&got); err != nil || !got {
			_ = tx.Rollback()
			t.Fatalf("hold the lock: %v %v", got, err)
		}
		time.AfterFunc(d, func() { _ = tx.Rollback() })
	}
	// A's indexer busy for a long while: B indexes all the same.
	hold(a, time.Second)
	store(t, sb, "s", msg("user", "a wombat in schema b"))
	if r, err := sessionstore.IndexSearch(ctx, b, 0); err != nil || r.Pending || r.Indexed != 1 {
		t.Fatalf("schema b's indexer beside schema a's: %+v %v", r, err)
	}
	// B's indexer busy for 100 ms: a search in B waits for it and then
	// finds the message stored meanwhile.
	store(t, sb, "s", msg("user", "a numbat too"))
	hold(b, 100*time.Millisecond)
	r, err := sb.SearchPage(ctx, sessionstore.SearchOptions{Query: "numbat"})
	if err != nil || len(r.Hits) != 1 || r.Indexing {
		t.Fatalf("search behind another indexer: %+v %v", r, err)
	}
	// A search the caller caught up for (serve, outside the budget) does not
	// catch up again: what was stored after the catch-up waits.
	o := sessionstore.SearchOptions{Query: "quoll"}
	if indexing, err := sb.CatchUpSearch(ctx, &o); err != nil || indexing || !o.CaughtUp {
		t.Fatalf("CatchUpSearch: %v %v %+v", indexing, err, o)
	}
	store(t, sb, "s", msg("user", "a quoll after the catch-up"))
	if r, err := sb.SearchPage(ctx, o); err != nil || len(r.Hits) != 0 {
		t.Fatalf("a caught-up search caught up again: %+v %v", r, err)
	}
	o = sessionstore.SearchOptions{Query: "quoll"}
	if _, err := sb.CatchUpSearch(ctx, &o); err != nil {
		t.Fatal(err)
	}
	if r, err := sb.SearchPage(ctx, o); err != nil || len(r.Hits) != 1 {
		t.Fatalf("after its catch-up: %+v %v", r, err)
	}
}

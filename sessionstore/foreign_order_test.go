package sessionstore_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 55, item 5: the Python service stamps created_at before its INSERT
// reaches the database. Its row, stamped before a store's rows and inserted
// while the store holds the session's lock, used to sort before them and
// move their load positions off the keys they store. The database now puts
// it after them (migration 17), so load order is arrival order.
func TestForeignRowStampedBeforeAStoreGoesAfterIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.NewPostgres(t)
	s := newStore(t, db, "alice", 200)
	first, err := s.Store(ctx, "race", []models.HistoryMessage{msg("user", "q1"), msg("assistant", "a1")}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sid := first.SessionID
	stamp := time.Now() // the other writer's clock, read before remstore's store
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	// remstore's store, its rows written and the session's lock held until
	// the commit below.
	r, err := s.InTx(tx).Store(ctx, "race", []models.HistoryMessage{msg("user", "q2"), msg("assistant", strings.Repeat("long answer ", 40))}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { // the peer's INSERT of a message (its session is there)
		_, err := db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
			VALUES (gen_random_uuid(), ?, 'user', 'late', '{"message_index": 0}', 'alice', 'alice', ?, ?)`, sid, stamp, stamp)
		done <- err
	}()
	waitForLockWaiter(t, db, sid)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hist, err := s.Load(ctx, "race", sessionstore.LoadOptions{NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range hist {
		got = append(got, m.Content[:min(len(m.Content), 4)])
	}
	if strings.Join(got, " ") != "q1 a1 q2 long late" {
		t.Fatalf("load order %v: the row that arrived last is not last", got)
	}
	for i, k := range r.Keys {
		if want := compressor.BuildKey(sid.String(), 2+i); k != want {
			t.Errorf("key %s of a row at load position %d (%s)", k, 2+i, want)
		}
	}
	var created time.Time
	if err := db.NewRaw("SELECT created_at FROM messages WHERE session_id = ? AND content = 'late'", sid).Scan(ctx, &created); err != nil {
		t.Fatal(err)
	}
	if moved := created.Sub(stamp); moved <= 0 || moved > 10*time.Second {
		t.Errorf("the row moved by %s: want more than 0, at most 10s", moved)
	}
}

// waitForLockWaiter returns once a connection waits for the session's write
// lock (sessionstore.lockKey; advisory locks show their key's halves).
func waitForLockWaiter(t *testing.T, db *repository.DB, sid uuid.UUID) {
	t.Helper()
	key := binary.BigEndian.Uint64(sid[:8]) ^ binary.BigEndian.Uint64(sid[8:])
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
		var n int
		if err := db.NewRaw(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND classid = ?::bigint::oid AND objid = ?::bigint::oid AND objsubid = 1`, key>>32, key&0xffffffff).Scan(context.Background(), &n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("no insert waited for the session's lock")
}

// What migration 17 moves and what it leaves: a row (or a batch) stamped
// at most 10 seconds before the session's newest row goes just after it,
// in its own order; an older row (an import), a newer one, one without a
// tenant and remstore's own rows keep their times, and the trigger is not
// even called for remstore's rows.
func TestForeignRowOrderWithinTheWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.NewPostgres(t)
	s := newStore(t, db, "alice", 200)
	res, err := s.Store(ctx, "order", []models.HistoryMessage{msg("user", "q1"), msg("assistant", "a1")}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID
	at := func(content string) (created, updated time.Time) {
		t.Helper()
		if err := db.NewRaw("SELECT created_at, updated_at FROM messages WHERE session_id = ? AND content = ?", sid, content).Scan(ctx, &created, &updated); err != nil {
			t.Fatalf("%s: %v", content, err)
		}
		return created, updated
	}
	insert := func(tenant any, stamp time.Time, contents ...string) {
		t.Helper()
		var values []string
		var args []any
		for _, c := range contents {
			values = append(values, "(gen_random_uuid(), ?, 'user', ?, '{\"message_index\": 0}', ?, 'alice', ?, ?)")
			args = append(args, sid, c, tenant, stamp, stamp)
		}
		if _, err := db.ExecContext(ctx, "INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at) VALUES "+
			strings.Join(values, ", "), args...); err != nil {
			t.Fatal(err)
		}
	}
	newest, _ := at("a1")
	// One statement, three rows stamped alike a second before the newest.
	insert("alice", newest.Add(-time.Second), "b1", "b2", "b3")
	for i, c := range []string{"b1", "b2", "b3"} {
		created, updated := at(c)
		if want := newest.Add(time.Duration(i+1) * time.Microsecond); !created.Equal(want) || updated.Before(created) {
			t.Errorf("%s: created %s updated %s, want created %s, updated not before it", c, created, updated, want)
		}
	}
	newest, _ = at("b3")
	old := newest.Add(-11 * time.Second) // past the window: an import
	insert("alice", old, "import")
	later := newest.Add(time.Hour)
	insert("alice", later, "later")
	insert(nil, newest.Add(-time.Second), "no tenant")
	for c, want := range map[string]time.Time{"import": old, "later": later, "no tenant": newest.Add(-time.Second)} {
		if created, _ := at(c); !created.Equal(want) {
			t.Errorf("%s moved from %s to %s", c, want, created)
		}
	}
	// The kept count has every row: a store's keys are its load positions.
	r, err := s.Store(ctx, "order", []models.HistoryMessage{msg("user", "q2"), msg("assistant", "a2")}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hist, err := s.Load(ctx, "order", sessionstore.LoadOptions{NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range hist {
		got = append(got, m.Content)
	}
	if want := "import q1 a1 b1 b2 b3 later q2 a2"; strings.Join(got, " ") != want {
		t.Fatalf("load order %q, want %q", strings.Join(got, " "), want)
	}
	if r.Keys[0] != compressor.BuildKey(sid.String(), 7) || r.Keys[1] != compressor.BuildKey(sid.String(), 8) {
		t.Errorf("keys %v, load positions 7 and 8", r.Keys)
	}

	// Calls of the trigger's function, counted in one transaction.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck
	if _, err := tx.ExecContext(ctx, "SET LOCAL track_functions = 'pl'"); err != nil {
		t.Fatal(err)
	}
	calls := func() (n int64) {
		t.Helper()
		if err := tx.NewRaw("SELECT COALESCE(pg_stat_get_xact_function_calls('remstore_order_foreign_row'::regproc), 0)").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 3 {
		if _, err := s.InTx(tx).Store(ctx, "order", []models.HistoryMessage{msg("user", fmt.Sprint("q", i)), msg("assistant", "a")}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls(); n != 0 {
		t.Fatalf("remstore's own rows called the trigger %d times", n)
	}
	if _, err := dbtest.PeerStore(ctx, tx, sid, "alice", []dbtest.PeerMessage{{Role: "user", Content: "peer"}}, func(int) time.Time { return time.Now() }); err != nil {
		t.Fatal(err)
	}
	if n := calls(); n != 1 {
		t.Fatalf("another writer's row called the trigger %d times, want 1", n)
	}
}

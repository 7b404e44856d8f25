package migrations_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
)

// Issue 26: a session could change tenant under remstore (the peer's
// upsert on alice's soft-deleted session set its tenant to bob), and the
// peer wrote bob's messages into alice's session. The guard refuses both,
// for any writer, and leaves single-tenant and tenantless writes alone.
func TestTenantGuard(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	ctx := context.Background()
	at := func(i int) time.Time { return time.Now().Add(time.Duration(i) * time.Microsecond) }
	alice := uuid.New()
	if _, err := dbtest.PeerStore(ctx, db, alice, "alice", []dbtest.PeerMessage{{Role: "user", Content: "mine"}}, at); err != nil {
		t.Fatalf("a single-tenant write: %v", err)
	}
	if _, err := dbtest.PeerStore(ctx, db, alice, "alice", []dbtest.PeerMessage{{Role: "assistant", Content: "more"}}, at); err != nil {
		t.Fatalf("the same tenant again: %v", err)
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "SQLSTATE 23514") || strings.Contains(err.Error(), "alice") {
			t.Fatalf("%s: %v; want the guard's check violation, naming no tenant", what, err)
		}
	}
	_, err := dbtest.PeerStore(ctx, db, alice, "bob", []dbtest.PeerMessage{{Role: "user", Content: "FORGED"}}, at)
	refused("bob's message into alice's session", err)
	if _, err := db.ExecContext(ctx, "UPDATE sessions SET deleted_at = now() WHERE id = ?", alice); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, "UPDATE sessions SET tenant_id = 'bob' WHERE id = ?", alice)
	refused("the takeover of a soft-deleted session", err)
	_, err = db.ExecContext(ctx, "UPDATE messages SET tenant_id = 'bob' WHERE session_id = ?", alice)
	refused("a message changing tenant", err)
	other := uuid.New()
	if _, err := dbtest.PeerStore(ctx, db, other, "bob", []dbtest.PeerMessage{{Role: "user", Content: "b"}}, at); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, "UPDATE messages SET session_id = ? WHERE session_id = ?", alice, other)
	refused("a message moved into another tenant's session", err)
	// Tenantless sessions (the peer's older rows) take anyone's messages,
	// and get a tenant once.
	open := uuid.New()
	if _, err := db.ExecContext(ctx, "INSERT INTO sessions (id, name, status, created_at, updated_at) VALUES (?, 'x', 'active', now(), now())", open); err != nil {
		t.Fatal(err)
	}
	if _, err := dbtest.PeerStore(ctx, db, open, "carol", []dbtest.PeerMessage{{Role: "user", Content: "c"}}, at); err != nil {
		t.Fatalf("into a tenantless session: %v", err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE sessions SET tenant_id = 'carol' WHERE id = ?", open); err != nil {
		t.Fatalf("a tenant set once: %v", err)
	}
	var n int
	if err := db.NewRaw("SELECT count(*) FROM messages WHERE session_id = ? AND tenant_id = 'alice'", alice).Scan(ctx, &n); err != nil || n != 2 {
		t.Fatalf("alice's session holds %d of her messages (%v)", n, err)
	}
}

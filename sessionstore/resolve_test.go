package sessionstore_test

import (
	"errors"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// ResolveID names a session as every other call finds it: two tenants'
// "plan" are two ids; a name whose public id another tenant took resolves,
// before and after its first store, to where the store puts it; another
// tenant's UUID is not found.
func TestResolveID(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		alice, bob := mk("alice"), mk("bob")
		hi := []models.HistoryMessage{msg("user", "hi")}
		ra, err := alice.Store(ctx, "plan", hi, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rb, err := bob.Store(ctx, "plan", hi, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, errA := alice.ResolveID(ctx, "plan")
		b, errB := bob.ResolveID(ctx, "plan")
		if errA != nil || errB != nil || a != ra.SessionID || b != rb.SessionID || a == b {
			t.Fatalf("plan: alice %v %v (stored %v), bob %v %v (stored %v)", a, errA, ra.SessionID, b, errB, rb.SessionID)
		}
		if id, err := alice.ResolveID(ctx, a.String()); err != nil || id != a {
			t.Fatalf("her own UUID: %v %v", id, err)
		}
		if _, err := alice.ResolveID(ctx, b.String()); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Fatalf("bob's UUID as alice: %v", err)
		}
		// No session yet: the public id, which the store then uses.
		pub, _ := sessionstore.SessionUUID("alice", "fresh")
		if id, err := alice.ResolveID(ctx, "fresh"); err != nil || id != pub {
			t.Fatalf("fresh: %v %v, want %v", id, err, pub)
		}
		// Bob took the public id of her "taken": the private one, before
		// and after her first store, and the store agrees.
		squat, _ := sessionstore.SessionUUID("alice", "taken")
		if _, err := bob.Store(ctx, squat.String(), hi, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		before, err := alice.ResolveID(ctx, "taken")
		if err != nil || before == squat {
			t.Fatalf("taken, before her store: %v %v (bob's %v)", before, err, squat)
		}
		r, err := alice.Store(ctx, "taken", hi, sessionstore.StoreOptions{})
		if err != nil || r.SessionID != before {
			t.Fatalf("her store went to %v (%v), resolved %v", r.SessionID, err, before)
		}
		if after, err := alice.ResolveID(ctx, "taken"); err != nil || after != before {
			t.Fatalf("taken, after: %v %v", after, err)
		}
		if _, err := alice.ResolveID(ctx, ""); err == nil {
			t.Fatal("an empty key resolved")
		}
	})
}

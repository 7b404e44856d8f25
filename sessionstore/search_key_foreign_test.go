package sessionstore

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/remstore/remstore/internal/dbtest"
)

// A key search that finds the tenant's row inside another tenant's
// session (the Python service's, from before the tenant guard) neither
// names that session nor gives the key's number as a place: the tenant
// has no load of it, so Index is -1, as for every hit without one. Before,
// the hit carried the number in the key (9 here), a position in nothing.
func TestKeySearchInAnotherTenantsSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			dbtest.WithoutTenantGuard(t, db)
			sa, err := SessionUUID("A", "a")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := dbtest.PeerStore(ctx, db, sa, "A", []dbtest.PeerMessage{{Role: "user", Content: "A's question"}},
				func(int) time.Time { return time.Now().UTC() }); err != nil {
				t.Fatal(err)
			}
			key := "session-" + sa.String() + "-msg-9"
			if _, err := db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id, created_at, updated_at)
				VALUES (?, ?, 'assistant', 'B answers', ?, 'B', 'B', ?, ?)`, uuid.NewString(), sa.String(), `{"entity_key":"`+key+`"}`,
				time.Now().UTC(), time.Now().UTC()); err != nil {
				t.Fatal(err)
			}
			b, err := New(db, Options{UserID: "B"})
			if err != nil {
				t.Fatal(err)
			}
			hits, err := b.Search(ctx, SearchOptions{Query: key, In: SearchKey})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 1 {
				t.Fatalf("B's key search: %d hits, want B's row", len(hits))
			}
			for _, h := range hits {
				if h.SessionName != "" || h.SessionID != uuid.Nil || h.Index != -1 {
					t.Errorf("B's key search: session %q %s at %d, want none at -1", h.SessionName, h.SessionID, h.Index)
				}
			}
		})
	}
}

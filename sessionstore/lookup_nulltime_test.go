package sessionstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/remstore/remstore/internal/dbtest"
)

// A row without a created_at is in no load (TestSearchSkipsWhatNoLoadShows),
// so a key, which names a place in a load, never finds it: by position
// (SQLite sorts NULL first, so msg-0 found it and every later key the row
// before its own; PostgreSQL sorts it last, so the key one past the load
// found it), nor by a stored key a key search then placed at 0.
func TestLookupSkipsWhatNoLoadShows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			dbtest.WithoutTenantGuard(t, db)
			s, err := New(db, Options{UserID: "A"})
			if err != nil {
				t.Fatal(err)
			}
			sid := uuid.New()
			t0 := time.Now().UTC()
			// The Python service's rows: no stored key, so keys find them by position.
			if _, err := dbtest.PeerStore(ctx, db, sid, "A", []dbtest.PeerMessage{{Role: "user", Content: "hello"}, {Role: "assistant", Content: "the real answer"}},
				func(i int) time.Time { return t0.Add(time.Duration(i) * time.Millisecond) }); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id, created_at, updated_at)
				VALUES (?, ?, 'assistant', 'ghost without a time', ?, 'A', 'A', NULL, NULL)`, uuid.NewString(), sid.String(), `{"entity_key":"session-`+sid.String()+`-msg-7"}`); err != nil {
				t.Fatal(err)
			}
			load, err := s.Load(ctx, sid.String(), LoadOptions{NoCompress: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(load) != 2 || load[1].Content != "the real answer" {
				t.Fatalf("the load: %+v, want hello and the real answer", load)
			}
			if got, err := s.LookupIndex(ctx, sid.String(), 1); err != nil || got != "the real answer" {
				t.Errorf("lookup of position 1: %q %v, want the real answer (the load's)", got, err)
			}
			if got, err := s.LookupIndex(ctx, sid.String(), 2); !errors.Is(err, ErrNotFound) {
				t.Errorf("lookup of position 2, past the load: %q %v, want not found", got, err)
			}
			hits, err := s.Search(ctx, SearchOptions{Query: "session-" + sid.String() + "-msg-7", In: SearchKey})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range hits {
				if h.Index != -1 {
					t.Errorf("key search: the row no load shows placed at %d, want -1", h.Index)
				}
			}
		})
	}
}

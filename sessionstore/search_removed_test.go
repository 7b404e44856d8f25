package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// A hit whose row is popped (soft removal) or purged (the row gone) between
// the search that found it and its positions has no place in a load:
// Index -1, as a session hit. The hits after it keep their places (a popped
// row stays in the chain of ranges, a purged one drops out of it); before,
// a popped hit read the load's length and a purged one 0.
func TestSearchHitRemovedBeforeItsPosition(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			s, err := New(db, Options{UserID: "A"})
			if err != nil {
				t.Fatal(err)
			}
			var msgs []models.HistoryMessage
			for i := range 6 {
				msgs = append(msgs, models.HistoryMessage{Role: models.RoleUser, Content: fmt.Sprintf("needle %d", i)})
			}
			if _, err := s.Store(ctx, "a", msgs, StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			o := SearchOptions{Query: "needle", Limit: 10}
			if _, err := s.CatchUpSearch(ctx, &o); err != nil {
				t.Fatal(err)
			}
			res, err := s.SearchPage(ctx, o)
			if err != nil || len(res.Hits) != 6 {
				t.Fatalf("search: %d hits, %v", len(res.Hits), err)
			}
			// The search's ids, as searchRows read them: by content here.
			sid, err := s.SessionUUID("a")
			if err != nil {
				t.Fatal(err)
			}
			byText := map[string]uuid.UUID{}
			rows, err := db.QueryContext(ctx, "SELECT id, content FROM messages WHERE session_id = ?", sid.String())
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id uuid.UUID
				var c string
				if err := rows.Scan(&id, &c); err != nil {
					t.Fatal(err)
				}
				byText[c] = id
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
			hits := res.Hits
			ids := make([]uuid.UUID, len(hits))
			for i, h := range hits {
				ids[i] = byText[h.Snippet]
			}
			// needle 5 popped, needle 2 purged, after the search.
			if _, ok, err := s.PopMessage(ctx, "a"); err != nil || !ok {
				t.Fatalf("pop: %v %v", ok, err)
			}
			if _, err := db.ExecContext(ctx, "DELETE FROM messages WHERE id = ?", byText["needle 2"].String()); err != nil {
				t.Fatal(err)
			}
			if err := s.positions(ctx, hits, ids); err != nil {
				t.Fatal(err)
			}
			load, err := s.Load(ctx, "a", LoadOptions{NoCompress: true})
			if err != nil {
				t.Fatal(err)
			}
			at := map[string]int{}
			for i, m := range load {
				at[m.Content] = i
			}
			for _, h := range hits {
				want, ok := at[h.Snippet]
				if !ok {
					want = -1
				}
				if h.Index != want {
					t.Errorf("%q at %d, want %d (load: %d messages)", h.Snippet, h.Index, want, len(load))
				}
			}
		})
	}
}

// A row without a created_at (the column allows NULL; the Python service
// and remstore always set it, but a hand-written INSERT need not) is in no
// load, so search does not find it either: before, search found it at
// an Index the load did not have, SQLite's load of the session was empty,
// and PostgreSQL's last N counted it.
func TestSearchSkipsWhatNoLoadShows(t *testing.T) {
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
			r, err := s.Store(ctx, "a", []models.HistoryMessage{{Role: models.RoleUser, Content: "needle one"}, {Role: models.RoleUser, Content: "needle two"}}, StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			insertWithoutTime(t, db, r.SessionID, "user", "needle without a time", `{}`)
			load, err := s.Load(ctx, "a", LoadOptions{NoCompress: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(load) != 2 {
				t.Fatalf("the load shows %d messages, want the 2 with a time", len(load))
			}
			if last, err := s.Load(ctx, "a", LoadOptions{NoCompress: true, LastN: 1}); err != nil || len(last) != 1 || last[0].Content != "needle two" {
				t.Errorf("the last 1: %+v %v, want needle two", last, err)
			}
			at := map[string]int{}
			for i, m := range load {
				at[m.Content] = i
			}
			o := SearchOptions{Query: "needle", Limit: 10}
			if _, err := s.CatchUpSearch(ctx, &o); err != nil {
				t.Fatal(err)
			}
			res, err := s.SearchPage(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range res.Hits {
				if i, ok := at[h.Snippet]; !ok || i != h.Index {
					t.Errorf("hit %q at %d; the load (%d messages) has it at %d (%v)", h.Snippet, h.Index, len(load), i, ok)
				}
			}
			if len(res.Hits) != len(load) {
				t.Errorf("%d hits, the load shows %d messages", len(res.Hits), len(load))
			}
		})
	}
}

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
			insertWithoutTime(t, db, sid, "assistant", "ghost without a time", `{"entity_key":"session-`+sid.String()+`-msg-7"}`)
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

// insertWithoutTime writes tenant A's row into session sid with a NULL
// created_at, as only a hand-written INSERT does.
func insertWithoutTime(t *testing.T, db *repository.DB, sid uuid.UUID, role, content, metadata string) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), `INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, 'A', 'A', NULL, NULL)`, uuid.NewString(), sid.String(), role, content, metadata); err != nil {
		t.Fatal(err)
	}
}

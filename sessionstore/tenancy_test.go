package sessionstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// Another tenant's session behaves, on every call, as a session that does not
// exist and reveals nothing of it; the owner's session is untouched after.
func TestTenancyMatrix(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		alice, bob := mk("alice"), mk("bob")
		secret := "alice-secret-name"
		long := strings.Repeat("alice's long answer ", 10)
		sid := uuid.New()
		res := store(t, alice, sid.String(), msg("user", "q"), msg("assistant", long))
		if err := rename(ctx, alice, sid.String(), secret); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.SetStatus(ctx, sid.String(), "completed", ""); err != nil {
			t.Fatal(err)
		}
		key := res.Keys[1]

		// Two users' "chat-1" are two sessions.
		a1, b1 := store(t, alice, "chat-1", msg("user", "a")), store(t, bob, "chat-1", msg("user", "b"))
		if a1.SessionID == b1.SessionID {
			t.Fatal("alice's and bob's chat-1 are one session")
		}

		id := sid.String()
		notFound := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, sessionstore.ErrNotFound) {
				t.Errorf("bob %s alice's session: %v, want not found", what, err)
			} else if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "completed") {
				t.Errorf("bob %s: error reveals the session: %v", what, err)
			}
		}
		_, err := bob.Store(ctx, id, []models.HistoryMessage{msg("user", "intrude")}, sessionstore.StoreOptions{})
		notFound("stores into", err)
		_, err = bob.EnsureSession(ctx, id, "")
		notFound("ensures", err)
		_, _, err = bob.GetSession(ctx, id, sessionstore.LoadOptions{})
		notFound("gets", err)
		_, err = bob.SetStatus(ctx, id, "active", "")
		notFound("reopens", err)
		_, err = bob.SetStatus(ctx, id, "cancelled", "hijack")
		notFound("cancels", err)
		notFound("renames", rename(ctx, bob, id, "bob's now"))
		_, err = bob.UpdateSession(ctx, id, sessionstore.SessionUpdate{Settings: map[string]any{"m": "x"}})
		notFound("updates", err)
		_, err = bob.Fork(ctx, id, sessionstore.ForkOptions{})
		notFound("forks", err)
		_, err = bob.Compact(ctx, id, sessionstore.DeterministicSummary, sessionstore.CompactOptions{})
		notFound("compacts", err)
		_, err = bob.SessionUsage(ctx, id)
		notFound("sums usage of", err)
		notFound("deletes", bob.DeleteSession(ctx, id, sessionstore.DeleteOptions{}))
		notFound("purges", bob.DeleteSession(ctx, id, sessionstore.DeleteOptions{Purge: true}))
		if h, err := bob.Load(ctx, id, sessionstore.LoadOptions{}); err != nil || len(h) != 0 {
			t.Errorf("bob loads alice's session: %v %v", h, err)
		}
		if _, err := bob.Lookup(ctx, key); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Errorf("bob looks up alice's key: %v", err)
		}
		if _, err := bob.LookupIndex(ctx, id, 1); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Errorf("bob looks up alice's index: %v", err)
		}
		list, err := bob.ListSessions(ctx, sessionstore.ListOptions{})
		if err != nil || list.Total != 1 || list.Sessions[0].ID != b1.SessionID {
			t.Errorf("bob's list: %+v %v", list, err)
		}
		// A fork may not target alice's session either.
		_, err = bob.Fork(ctx, "chat-1", sessionstore.ForkOptions{NewSessionKey: id})
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != "new_session_id" {
			t.Errorf("bob forks onto alice's session id: %v", err)
		}

		info, h, err := alice.GetSession(ctx, id, sessionstore.LoadOptions{NoCompress: true})
		if err != nil || info.Status != "completed" || info.Name != secret || len(h) != 2 || h[1].Content != long {
			t.Fatalf("alice's session changed: %+v %v %v", info, h, err)
		}
		var b bytes.Buffer
		_ = models.EncodeHistory(&b, h)
		if strings.Contains(b.String(), "intrude") {
			t.Fatal("bob's message landed in alice's session")
		}
	})
}

// A refused store leaves no trace: not a message, not even a new session row.
func TestRefusedStoreCreatesNoSession(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		taken := uuid.NewString()
		m := msg("user", "x")
		m.ID = taken
		store(t, s, "first", m)
		if _, err := s.Store(ctx, "fresh", []models.HistoryMessage{msg("user", "y"), m}, sessionstore.StoreOptions{}); err == nil {
			t.Fatal("an id of another session accepted")
		}
		if _, _, err := s.GetSession(ctx, "fresh", sessionstore.LoadOptions{}); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Fatalf("the refused store created its session: %v", err)
		}
	})
}

// The store composes with a caller's transaction: with InTx every call
// runs inside it, so a rollback takes the stored messages (and the session)
// back with the caller's own writes.
func TestStoreInsideCallersTransaction(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		for _, commit := range []bool{false, true} {
			key := fmt.Sprintf("tx-%v", commit)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			s := newStore(t, db, "A", 10).InTx(tx)
			long := strings.Repeat("a long answer ", 5)
			res := store(t, s, key, msg("user", "q"), msg("assistant", long))
			h, err := s.Load(ctx, key, sessionstore.LoadOptions{})
			if err != nil || len(h) != 2 || !h[1].Compressed {
				t.Fatalf("load inside the transaction: %+v %v", h, err)
			}
			if full, err := s.Lookup(ctx, res.Keys[1]); err != nil || full != long {
				t.Fatalf("lookup inside the transaction: %q %v", full, err)
			}
			if _, err := s.SetStatus(ctx, key, "completed", ""); err != nil {
				t.Fatal(err)
			}
			if commit {
				err = tx.Commit()
			} else {
				err = tx.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			outside := newStore(t, db, "A", 10)
			h, _ = outside.Load(ctx, key, sessionstore.LoadOptions{})
			_, _, gerr := outside.GetSession(ctx, key, sessionstore.LoadOptions{})
			if commit && (len(h) != 2 || gerr != nil) {
				t.Fatalf("committed: %d messages, %v", len(h), gerr)
			}
			if !commit && (len(h) != 0 || !errors.Is(gerr, sessionstore.ErrNotFound)) {
				t.Fatalf("rolled back: %d messages, %v", len(h), gerr)
			}
		}
	})
}

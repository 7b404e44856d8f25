package sessionstore_test

import (
	"errors"
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

// H2 of issue 42: bob creates sessions under the public ids alice's names
// map to, ahead of her. Her names still work, on every call, and nothing of
// bob's shows; his sessions stay his.
func TestNamesNoOtherTenantCanTake(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		alice, bob := mk("alice"), mk("bob")
		squat := func(name string) uuid.UUID {
			t.Helper()
			pub, err := sessionstore.SessionUUID("alice", name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := bob.Store(ctx, pub.String(), []models.HistoryMessage{msg("user", "bob was here")}, sessionstore.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			return pub
		}
		pub := squat("chat-7")
		long := strings.Repeat("alice's long answer ", 30)
		res, err := alice.Store(ctx, "chat-7", []models.HistoryMessage{msg("user", "hi"), msg("assistant", long)}, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatalf("alice's store into a taken name: %v", err)
		}
		if res.SessionID == pub {
			t.Fatal("alice's messages went into bob's session")
		}
		// Every call by the name finds her session, not bob's.
		hist, err := alice.Load(ctx, "chat-7", sessionstore.LoadOptions{})
		if err != nil || len(hist) != 2 || hist[0].Content != "hi" {
			t.Fatalf("load: %v %+v", err, hist)
		}
		if full, err := alice.Lookup(ctx, hist[1].EntityKey); err != nil || full != long {
			t.Fatalf("lookup of her key: %v", err)
		}
		if full, err := alice.LookupIndex(ctx, "chat-7", 1); err != nil || full != long {
			t.Fatalf("lookup by index: %v", err)
		}
		info, err := alice.SessionInfo(ctx, "chat-7")
		if err != nil || info.ID != res.SessionID || info.Name != "chat-7" {
			t.Fatalf("info: %v %+v", err, info)
		}
		if _, err := alice.UpdateSession(ctx, "chat-7", sessionstore.SessionUpdate{AgentName: models.Ptr("planner")}); err != nil {
			t.Fatalf("update: %v", err)
		}
		if u, err := alice.SessionUsage(ctx, "chat-7"); err != nil {
			t.Fatalf("usage: %v %+v", err, u)
		}
		if _, err := alice.Fork(ctx, "chat-7", sessionstore.ForkOptions{UpTo: 1, NewSessionKey: "chat-7b"}); err != nil {
			t.Fatalf("fork: %v", err)
		}
		// A fork's target name taken by bob forks to her private id too.
		squat("chat-8")
		if f, err := alice.Fork(ctx, "chat-7", sessionstore.ForkOptions{UpTo: 1, NewSessionKey: "chat-8"}); err != nil || f.Name != "chat-8" {
			t.Fatalf("fork into a taken name: %v %+v", err, f)
		}
		if h, err := alice.Load(ctx, "chat-8", sessionstore.LoadOptions{}); err != nil || len(h) != 1 || h[0].Content != "hi" {
			t.Fatalf("load the fork by its taken name: %v %+v", err, h)
		}
		if m, ok, err := alice.PopMessage(ctx, "chat-7"); err != nil || !ok || m.Content != long {
			t.Fatalf("pop: %v %v", ok, err)
		}
		if n, err := alice.ClearMessages(ctx, "chat-7"); err != nil || n != 1 {
			t.Fatalf("clear: %d %v", n, err)
		}
		if err := alice.DeleteSession(ctx, "chat-7", sessionstore.DeleteOptions{Purge: true}); err != nil {
			t.Fatalf("purge: %v", err)
		}
		// Bob's squatting sessions are his, untouched.
		if h, err := bob.Load(ctx, pub.String(), sessionstore.LoadOptions{}); err != nil || len(h) != 1 || h[0].Content != "bob was here" {
			t.Fatalf("bob's session: %v %+v", err, h)
		}
		// A name nobody has is not found, as before; one alice holds at its
		// public id stays there.
		if _, err := alice.SessionInfo(ctx, "never"); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("a name nobody has: %v", err)
		}
		own, err := alice.Store(ctx, "mine", []models.HistoryMessage{msg("user", "x")}, sessionstore.StoreOptions{})
		if want, _ := sessionstore.SessionUUID("alice", "mine"); err != nil || own.SessionID != want {
			t.Fatalf("an untaken name left its public id: %v %s", err, own.SessionID)
		}
	})
}

// M1 of issue 42: ids derived from an Idempotency-Key are stable for one
// database and request, and unknowable elsewhere: another database (another
// secret) derives others, so a tenant cannot compute them to take them first.
func TestIdempotencyIDsNoOneCanCompute(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			s1 := newStore(t, d.New(t), "alice", 200)
			s2 := newStore(t, d.New(t), "alice", 200)
			msgs := func() []models.HistoryMessage {
				return []models.HistoryMessage{msg("user", "a"), {Role: "assistant", Content: "b", ID: "11111111-1111-1111-1111-111111111111"}, msg("user", "c")}
			}
			a, b, other := msgs(), msgs(), msgs()
			for _, c := range []struct {
				s  *sessionstore.Store
				ms []models.HistoryMessage
			}{{s1, a}, {s1, b}, {s2, other}} {
				if err := c.s.FillIDs(ctx, c.ms, "alice\x00s", "k"); err != nil {
					t.Fatal(err)
				}
			}
			if a[0].ID != b[0].ID || a[2].ID != b[2].ID || a[0].ID == a[2].ID || a[1].ID != "11111111-1111-1111-1111-111111111111" {
				t.Fatalf("same request: %q %q %q / %q", a[0].ID, a[1].ID, a[2].ID, b[0].ID)
			}
			if other[0].ID == a[0].ID {
				t.Fatal("another database derived the same id: the ids are computable")
			}
			pub := uuid.NewSHA1(uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://remstore.dev/ns/idempotency-key")), []byte("alice\x00s\x00k\x000"))
			if a[0].ID == pub.String() {
				t.Fatal("the id is the old public derivation")
			}
			for _, scope := range [][2]string{{"bob\x00s", "k"}, {"alice\x00t", "k"}, {"alice\x00s", "k2"}} {
				c := msgs()
				if err := s1.FillIDs(ctx, c, scope[0], scope[1]); err != nil || c[0].ID == a[0].ID {
					t.Fatalf("scope %q key %q: %q (%v)", scope[0], scope[1], c[0].ID, err)
				}
			}
			if err := s1.FillIDs(ctx, msgs(), "s", "a b"); err == nil {
				t.Fatal("a key with a space accepted")
			}
		})
	}
}

// H4 of issue 42: a row another writer commits after remstore's last row
// but with an earlier created_at (its clock ran before it committed) was
// never counted, and every later key was off by one for good. The database
// counts such rows as they arrive now: the next key is its load position.
func TestKeysCountRowsCommittedLate(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			s := newStore(t, db, "alice", 200)
			res, err := s.Store(ctx, "mixed", []models.HistoryMessage{msg("user", "q1"), msg("assistant", "a1")}, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// The other writer's row, stamped a second before remstore's rows.
			if _, err := dbtest.PeerStore(ctx, db, res.SessionID, "alice", []dbtest.PeerMessage{{Role: "user", Content: "late"}},
				func(int) time.Time { return time.Now().Add(-time.Second) }); err != nil {
				t.Fatal(err)
			}
			for turn := range 3 {
				r, err := s.Store(ctx, "mixed", []models.HistoryMessage{msg("user", "q"), msg("assistant", strings.Repeat("long answer ", 40))}, sessionstore.StoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				hist, err := s.Load(ctx, "mixed", sessionstore.LoadOptions{NoCompress: true})
				if err != nil {
					t.Fatal(err)
				}
				want := compressor.BuildKey(res.SessionID.String(), len(hist)-1)
				if r.Keys[1] != want {
					t.Fatalf("turn %d: the answer's key %s, its load position makes %s", turn, r.Keys[1], want)
				}
			}
		})
	}
}

package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// loadLast loads the session and the last message the load read.
func loadLast(t *testing.T, s *sessionstore.Store, key string, o sessionstore.LoadOptions) ([]models.HistoryMessage, string) {
	t.Helper()
	var last string
	calls := 0
	o.OnLast = func(l string) { last = l; calls++ }
	h, err := s.Load(context.Background(), key, o)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("OnLast called %d times", calls)
	}
	return h, last
}

// A guarded store writes only onto the session its caller loaded: a second
// turn racing from the same history is refused with what the session holds,
// a resend of a stored call is a retry, and a pop moves the session too.
func TestGuardedStore(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "alice", 200)
		h, last := loadLast(t, s, "g", sessionstore.LoadOptions{})
		if len(h) != 0 || last != sessionstore.Empty {
			t.Fatalf("new session: %d messages, last %q", len(h), last)
		}
		turn := []models.HistoryMessage{msg("user", "hi"), msg("assistant", "hello")}
		res, err := s.Store(ctx, "g", turn, sessionstore.StoreOptions{ExpectLast: last})
		if err != nil {
			t.Fatal(err)
		}
		if res.Last != res.IDs[1].String() {
			t.Fatalf("last after the store %q, want the second message %s", res.Last, res.IDs[1])
		}
		if _, l := loadLast(t, s, "g", sessionstore.LoadOptions{}); l != res.Last {
			t.Fatalf("load says last %q, the store %q", l, res.Last)
		}
		// The same history again: the session moved on.
		_, err = s.Store(ctx, "g", []models.HistoryMessage{msg("user", "racing")}, sessionstore.StoreOptions{ExpectLast: sessionstore.Empty})
		var moved *sessionstore.MovedError
		if !errors.As(err, &moved) || !errors.Is(err, sessionstore.ErrMoved) || moved.Last != res.Last || moved.Expected != sessionstore.Empty {
			t.Fatalf("stale guard: %v", err)
		}
		if c := sessionstore.Classify(err); c.Code != "conflict" || c.Field != "expect_last" || c.Kind.HTTPStatus() != 409 {
			t.Fatalf("class %+v", c)
		}
		// A resend of a stored call (its ids derived, as an Idempotency-Key
		// does) is a retry, though its guard is stale now.
		next := []models.HistoryMessage{msg("user", "again"), msg("assistant", "sure")}
		if err := s.FillIDs(ctx, next, "alice\x00g", "turn-2"); err != nil {
			t.Fatal(err)
		}
		first, err := s.Store(ctx, "g", next, sessionstore.StoreOptions{ExpectLast: res.Last})
		if err != nil {
			t.Fatal(err)
		}
		again, err := s.Store(ctx, "g", next, sessionstore.StoreOptions{ExpectLast: res.Last})
		if err != nil || again.Existing != 2 || again.Last != first.Last || again.Keys[1] != first.Keys[1] {
			t.Fatalf("resend: %+v %v (first %+v)", again, err, first)
		}
		h, _ = loadLast(t, s, "g", sessionstore.LoadOptions{})
		if len(h) != 4 {
			t.Fatalf("%d messages, want 4", len(h))
		}
		// A pop moves the session: the popped message's id guards nothing.
		if _, ok, err := s.PopMessage(ctx, "g"); err != nil || !ok {
			t.Fatal(ok, err)
		}
		if _, err := s.Store(ctx, "g", []models.HistoryMessage{msg("user", "x")}, sessionstore.StoreOptions{ExpectLast: first.Last}); !errors.Is(err, sessionstore.ErrMoved) {
			t.Fatalf("after a pop: %v", err)
		}
		_, l := loadLast(t, s, "g", sessionstore.LoadOptions{})
		if l != first.IDs[0].String() {
			t.Fatalf("after a pop, last %q, want %s", l, first.IDs[0])
		}
		if _, err := s.Store(ctx, "g", []models.HistoryMessage{msg("user", "x")}, sessionstore.StoreOptions{ExpectLast: l}); err != nil {
			t.Fatal(err)
		}
		// Nothing else was written by a refused call.
		if h, _ := loadLast(t, s, "g", sessionstore.LoadOptions{}); len(h) != 4 || h[3].Content != "x" {
			t.Fatalf("history %v", h)
		}
		// A cleared session is empty again, for the guard too.
		if _, err := s.ClearMessages(ctx, "g"); err != nil {
			t.Fatal(err)
		}
		if _, l := loadLast(t, s, "g", sessionstore.LoadOptions{}); l != sessionstore.Empty {
			t.Fatalf("cleared: last %q", l)
		}
		// Another tenant's rows are not this tenant's session.
		bob := newStore(t, db, "bob", 200)
		if _, l := loadLast(t, bob, "g", sessionstore.LoadOptions{}); l != sessionstore.Empty {
			t.Fatalf("bob sees last %q", l)
		}
		// A guard that names no message is refused, naming the field.
		_, err = s.Store(ctx, "g", []models.HistoryMessage{msg("user", "x")}, sessionstore.StoreOptions{ExpectLast: "msg-3"})
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != "expect_last" {
			t.Fatalf("bad guard: %v", err)
		}
	})
}

// Turns racing from one history: exactly one is stored, whole; every other
// is refused, and nothing interleaves.
func TestRacingGuardedTurns(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "alice", 200)
		if _, err := s.Store(ctx, "race", []models.HistoryMessage{msg("system", "be brief")}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		for round := range 5 {
			_, last := loadLast(t, s, "race", sessionstore.LoadOptions{})
			const turns = 8
			var wg sync.WaitGroup
			errs := make([]error, turns)
			for i := range turns {
				wg.Add(1)
				go func() {
					defer wg.Done()
					turn := []models.HistoryMessage{msg("user", fmt.Sprintf("r%d-t%d-q", round, i)), msg("assistant", fmt.Sprintf("r%d-t%d-a", round, i))}
					_, errs[i] = s.Store(ctx, "race", turn, sessionstore.StoreOptions{ExpectLast: last})
				}()
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Fatalf("round %d: turns %d and %d both stored", round, won, i)
				case err == nil:
					won = i
				case !errors.Is(err, sessionstore.ErrMoved):
					t.Fatalf("round %d turn %d: %v", round, i, err)
				}
			}
			if won < 0 {
				t.Fatalf("round %d: no turn stored", round)
			}
			h, now := loadLast(t, s, "race", sessionstore.LoadOptions{})
			for i, err := range errs {
				var moved *sessionstore.MovedError
				if err != nil && (!errors.As(err, &moved) || moved.Last != now) {
					t.Fatalf("round %d turn %d: refused naming %v, the session's last is %s", round, i, err, now)
				}
			}
			if len(h) != 1+2*(round+1) || h[len(h)-2].Content != fmt.Sprintf("r%d-t%d-q", round, won) ||
				h[len(h)-1].Content != fmt.Sprintf("r%d-t%d-a", round, won) {
				t.Fatalf("round %d: history %v", round, h)
			}
		}
	})
}

// LastN is a suffix of the full load with tool pairs whole: the oracle here
// is the full load, cut by hand. Sessions only remstore wrote read an index
// range; one with the Python service's rows reads every row; both must
// give the same.
func TestLoadLastN(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "alice", 20)
		rng := rand.New(rand.NewPCG(7, 11))
		peer := uuid.New()
		base := time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)
		if _, err := dbtest.PeerStore(ctx, db, peer, "alice", []dbtest.PeerMessage{{Role: "user", Content: "from the peer"},
			{Role: "tool", Content: "peer result", ToolCallID: "p1", ToolName: "search"}}, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"mine", peer.String()} {
			calls := 0
			for range 60 {
				var batch []models.HistoryMessage
				switch rng.IntN(4) {
				case 0:
					batch = append(batch, msg("user", fmt.Sprintf("q%d", rng.IntN(1000))))
				case 1:
					batch = append(batch, msg("assistant", fmt.Sprintf("answer %d %s", rng.IntN(1000), "long long long long long long")))
				case 2: // an answer with calls and their results
					n := 1 + rng.IntN(2)
					call := msg("assistant", "")
					var results []models.HistoryMessage
					for range n {
						calls++
						id := fmt.Sprintf("c%d", calls)
						call.ToolCalls = append(call.ToolCalls, models.ToolCall{ID: id, Name: "search", Arguments: `{}`})
						r := msg("tool", "result "+id)
						r.ToolCallID, r.ToolName = id, "search"
						results = append(results, r)
					}
					batch = append(append(batch, call), results...)
				case 3: // a result whose call was never stored
					calls++
					r := msg("tool", fmt.Sprintf("orphan c%d", calls))
					r.ToolCallID, r.ToolName = fmt.Sprintf("c%d", calls), "search"
					batch = append(batch, r)
				}
				if _, err := s.Store(ctx, key, batch, sessionstore.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
				if rng.IntN(10) == 0 {
					if _, _, err := s.PopMessage(ctx, key); err != nil {
						t.Fatal(err)
					}
				}
			}
			full, fullLast := loadLast(t, s, key, sessionstore.LoadOptions{Extras: true})
			for n := 1; n <= len(full)+2; n++ {
				want := full[max(0, len(full)-n):]
				for len(want) > 0 && want[0].Role == models.RoleTool {
					want = want[1:]
				}
				got, last := loadLast(t, s, key, sessionstore.LoadOptions{LastN: n, Extras: true})
				if last != fullLast {
					t.Fatalf("%s last %d: last %q, the full load's %q", key, n, last, fullLast)
				}
				if len(got) != len(want) {
					t.Fatalf("%s last %d: %d messages, want %d", key, n, len(got), len(want))
				}
				for i := range got {
					if got[i].Content != want[i].Content || got[i].EntityKey != want[i].EntityKey {
						t.Fatalf("%s last %d: message %d is %q (%s), want %q (%s)", key, n, i, got[i].Content, got[i].EntityKey, want[i].Content, want[i].EntityKey)
					}
				}
				// Pairs whole: no result in the window whose call is before it.
				for _, m := range full[:len(full)-len(got)] {
					for _, c := range m.ToolCalls {
						for _, g := range got {
							if g.Role == models.RoleTool && g.ToolCallID == c.ID {
								t.Fatalf("%s last %d: result %s in the window, its call before it", key, n, c.ID)
							}
						}
					}
				}
			}
		}
		if _, err := s.Load(ctx, "mine", sessionstore.LoadOptions{LastN: 3, Since: base}); err == nil {
			t.Fatal("last with since: no error")
		}
	})
}

// A key is its message or nothing: after a pop, a clear, or for a user
// row, the key finds nothing and says why; it never returns another
// message's text, however the live rows moved.
func TestRemovedKeysFindNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "alice", 10)
		long := func(i int) string { return fmt.Sprintf("answer %d: %s", i, strings.Repeat("long text ", 10)) }
		var keys []string
		for i := range 4 {
			res, err := s.Store(ctx, "k", []models.HistoryMessage{msg("user", fmt.Sprintf("q%d", i)), msg("assistant", long(i))}, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, res.Keys...)
		}
		lookup := func(key, want, why string) {
			t.Helper()
			got, err := s.Lookup(ctx, key)
			if want != "" {
				if err != nil || got != want {
					t.Fatalf("lookup %s: %q %v, want %q", key, got, err, want)
				}
				return
			}
			if !errors.Is(err, sessionstore.ErrNotFound) || !strings.Contains(err.Error(), why) {
				t.Fatalf("lookup %s: %q %v, want not found (%s)", key, got, err, why)
			}
		}
		lookup(keys[1], long(0), "")
		lookup(keys[0], "", "user message")
		// Pop the last answer, then the user row before it: their keys find
		// nothing, and a later answer gets keys of its own.
		for range 2 {
			if _, _, err := s.PopMessage(ctx, "k"); err != nil {
				t.Fatal(err)
			}
		}
		lookup(keys[7], "", "removed")
		lookup(keys[5], long(2), "")
		res, err := s.Store(ctx, "k", []models.HistoryMessage{msg("assistant", long(9))}, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		lookup(keys[7], "", "removed")
		lookup(res.Keys[0], long(9), "")
		// A key no row holds, whose position holds a keyed row: not that row.
		sid, _ := s.SessionUUID("k")
		if _, err := db.ExecContext(ctx, "UPDATE messages SET metadata = "+renameKey(db)+" WHERE session_id = ? AND content = ?", sid, long(2)); err != nil {
			t.Fatal(err)
		}
		lookup(keys[5], "", "a key of its own")
		// A clear removes every message: every key finds nothing.
		if _, err := s.ClearMessages(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{keys[1], keys[3], res.Keys[0]} {
			lookup(k, "", "removed")
		}
	})
}

// renameKey is an UPDATE's new metadata with entity_key changed, by dialect.
func renameKey(db *repository.DB) string {
	if db.Postgres() {
		return `jsonb_set(metadata, '{entity_key}', '"renamed"')`
	}
	return `json_set(metadata, '$.entity_key', 'renamed')`
}

// A store racing a purge of its session: each call answers as if they had
// run one after the other, never a deadlock (issue 42, low: 7-10 of 30
// racing pairs ended in 40P01, a 503).
func TestStoreRacingPurge(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "alice", 200)
		for round := range 30 {
			key := fmt.Sprintf("purge-%d", round)
			if _, err := s.Store(ctx, key, []models.HistoryMessage{msg("user", "first"), msg("assistant", "a")}, sessionstore.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var storeErr, purgeErr error
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, storeErr = s.Store(ctx, key, []models.HistoryMessage{msg("user", "racing"), msg("assistant", "b")}, sessionstore.StoreOptions{})
			}()
			go func() {
				defer wg.Done()
				purgeErr = s.DeleteSession(ctx, key, sessionstore.DeleteOptions{Purge: true})
			}()
			wg.Wait()
			if storeErr != nil || purgeErr != nil && !errors.Is(purgeErr, sessionstore.ErrNotFound) {
				t.Fatalf("round %d: store %v, purge %v", round, storeErr, purgeErr)
			}
		}
	})
}

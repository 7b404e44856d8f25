package sessionstore_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/transfer"
)

// H1 of issue 42, the tenant's part: configurable limits per user, refused
// with 409 limit_reached naming the field, nothing written; a resend of what
// is stored already still gets its answer at the limit.
func TestLimits(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", Limits: sessionstore.Limits{SessionMessages: 5, Sessions: 2}})
			if err != nil {
				t.Fatal(err)
			}
			three := func() []models.HistoryMessage {
				return []models.HistoryMessage{msg("user", "a"), msg("assistant", "b"), msg("user", "c")}
			}
			if _, err := s.Store(ctx, "s1", three(), sessionstore.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			limited := func(err error, field string) {
				t.Helper()
				var le *sessionstore.LimitError
				c := sessionstore.Classify(err)
				if !errors.As(err, &le) || !errors.Is(err, sessionstore.ErrLimit) || c.Code != "limit_reached" || c.Field != field || c.Kind.HTTPStatus() != 409 {
					t.Fatalf("want a limit on %s: %v (%+v)", field, err, c)
				}
			}
			_, err = s.Store(ctx, "s1", three(), sessionstore.StoreOptions{})
			limited(err, "messages")
			if h, _ := s.Load(ctx, "s1", sessionstore.LoadOptions{}); len(h) != 3 {
				t.Fatalf("a refused store wrote: %d messages", len(h))
			}
			last := []models.HistoryMessage{{Role: "user", Content: "d", ID: uuid.NewString()}, {Role: "assistant", Content: "e", ID: uuid.NewString()}}
			if _, err := s.Store(ctx, "s1", last, sessionstore.StoreOptions{}); err != nil {
				t.Fatalf("up to the limit: %v", err)
			}
			if res, err := s.Store(ctx, "s1", last, sessionstore.StoreOptions{}); err != nil || res.Existing != 2 {
				t.Fatalf("a resend at the limit: %+v %v", res, err)
			}
			// Sessions: two; a third is refused; a purge makes room.
			if _, err := s.Store(ctx, "s2", three()[:1], sessionstore.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			_, err = s.Store(ctx, "s3", three()[:1], sessionstore.StoreOptions{})
			limited(err, "session_id")
			if _, err := s.SessionInfo(ctx, "s3"); err == nil {
				t.Fatal("the refused session exists")
			}
			if err := s.DeleteSession(ctx, "s2", sessionstore.DeleteOptions{Purge: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Store(ctx, "s3", three()[:1], sessionstore.StoreOptions{}); err != nil {
				t.Fatalf("after a purge: %v", err)
			}
			// Another user has limits of its own.
			bob, _ := sessionstore.New(db, sessionstore.Options{UserID: "bob", Limits: sessionstore.Limits{Sessions: 2}})
			if _, err := bob.Store(ctx, "s1", three(), sessionstore.StoreOptions{}); err != nil {
				t.Fatalf("bob: %v", err)
			}
		})
	}
}

// limited fails t unless err is the refusal of the limit on field, as
// every surface reports it (409 limit_reached naming the field).
func limitedBy(t *testing.T, err error, field string) {
	t.Helper()
	var le *sessionstore.LimitError
	c := sessionstore.Classify(err)
	if !errors.As(err, &le) || !errors.Is(err, sessionstore.ErrLimit) || c.Code != "limit_reached" || c.Field != field || c.Kind.HTTPStatus() != 409 {
		t.Fatalf("want the limit on %s: %v (%+v)", field, err, c)
	}
}

// tenantCounts is how many sessions and messages the tenant has, removed
// ones included.
func tenantCounts(t *testing.T, db *repository.DB, tenant string) (sessions, msgs int) {
	t.Helper()
	if err := db.NewRaw("SELECT count(*) FROM sessions WHERE tenant_id = ?", tenant).Scan(ctx, &sessions); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw("SELECT count(*) FROM messages WHERE tenant_id = ?", tenant).Scan(ctx, &msgs); err != nil {
		t.Fatal(err)
	}
	return sessions, msgs
}

func someMessages(n int, prefix string) []models.HistoryMessage {
	out := make([]models.HistoryMessage, n)
	for i := range out {
		out[i] = msg([]string{"user", "assistant"}[i%2], fmt.Sprintf("%s %d", prefix, i))
	}
	return out
}

// Every path that makes sessions or messages checks the limits as a store
// does, and a refused call writes nothing: a fork (it ignored
// REMSTORE_MAX_SESSIONS: 8 forks with a limit of 5 all answered 201), a
// compaction (its summary is one more message), an empty session made
// ahead of its first store.
func TestLimitsOnEveryPath(t *testing.T) {
	t.Parallel()
	type stores struct {
		limited, free *sessionstore.Store // one tenant, with and without the limits
		db            *repository.DB
		tenant        string
	}
	cases := []struct {
		name   string
		limits sessionstore.Limits
		field  string
		// run makes what the case needs and returns the error of the call
		// that must be refused; after checks that it wrote nothing.
		run   func(t *testing.T, s stores) error
		after func(t *testing.T, s stores)
	}{
		{"sequential forks past the session limit", sessionstore.Limits{Sessions: 5}, "session_id",
			func(t *testing.T, s stores) error {
				store(t, s.limited, "src", someMessages(2, "q")...)
				var last error
				for i := range 8 {
					_, err := s.limited.Fork(ctx, "src", sessionstore.ForkOptions{})
					switch {
					case i < 4 && err != nil:
						t.Fatalf("fork %d of 4 that fit: %v", i+1, err)
					case i >= 4 && err == nil:
						t.Fatalf("fork %d: a sixth session made past a limit of 5", i+1)
					case i >= 4:
						if !strings.Contains(err.Error(), "5 sessions") {
							t.Fatalf("the refusal does not name the limit: %v", err)
						}
						last = err
					}
				}
				return last
			},
			func(t *testing.T, s stores) {
				if n, m := tenantCounts(t, s.db, s.tenant); n != 5 || m != 10 {
					t.Fatalf("%d sessions, %d messages after the forks, want 5 and 10", n, m)
				}
			}},
		{"a fork copying more messages than a session may hold", sessionstore.Limits{SessionMessages: 3}, "messages",
			func(t *testing.T, s stores) error {
				store(t, s.free, "src", someMessages(5, "q")...) // stored before the limit was set
				if _, err := s.limited.Fork(ctx, "src", sessionstore.ForkOptions{UpTo: 3, NewSessionKey: "three"}); err != nil {
					t.Fatalf("a fork of 3 with room for 3: %v", err)
				}
				_, err := s.limited.Fork(ctx, "src", sessionstore.ForkOptions{NewSessionKey: "five"})
				return err
			},
			func(t *testing.T, s stores) {
				if _, err := s.free.SessionInfo(ctx, "five"); !errors.Is(err, sessionstore.ErrNotFound) {
					t.Fatalf("the refused fork made its session: %v", err)
				}
				if n, m := tenantCounts(t, s.db, s.tenant); n != 2 || m != 8 {
					t.Fatalf("%d sessions, %d messages, want 2 and 8", n, m)
				}
			}},
		{"a compaction past the message limit", sessionstore.Limits{SessionMessages: 4}, "messages",
			func(t *testing.T, s stores) error {
				store(t, s.limited, "full", someMessages(4, "q")...)
				_, err := s.limited.Compact(ctx, "full", sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: 1})
				return err
			},
			func(t *testing.T, s stores) {
				if h, _ := s.free.Load(ctx, "full", sessionstore.LoadOptions{NoCompress: true}); len(h) != 4 || h[0].Content != "q 0" {
					t.Fatalf("the refused compaction wrote: %d messages", len(h))
				}
				// With room for its summary, it compacts.
				store(t, s.free, "roomy", someMessages(3, "q")...)
				if _, err := s.limited.Compact(ctx, "roomy", sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: 1}); err != nil {
					t.Fatalf("a compaction with room: %v", err)
				}
			}},
		{"an empty session past the session limit", sessionstore.Limits{Sessions: 1}, "session_id",
			func(t *testing.T, s stores) error {
				store(t, s.limited, "one", msg("user", "a"))
				_, err := s.limited.EnsureSession(ctx, "two", "")
				return err
			},
			func(t *testing.T, s stores) {
				if n, _ := tenantCounts(t, s.db, s.tenant); n != 1 {
					t.Fatalf("%d sessions, want 1", n)
				}
			}},
		{"a lifecycle message at the message limit still closes the session", sessionstore.Limits{SessionMessages: 2}, "messages",
			func(t *testing.T, s stores) error {
				store(t, s.limited, "full", someMessages(2, "q")...)
				_, err := s.limited.Store(ctx, "full", someMessages(1, "more"), sessionstore.StoreOptions{})
				return err
			},
			func(t *testing.T, s stores) {
				// A cancel records its reason as one message even at the
				// limit: a session's final status is set once.
				if _, err := s.limited.SetStatus(ctx, "full", models.StatusCancelled, "over budget"); err != nil {
					t.Fatalf("cancel at the limit: %v", err)
				}
				if _, m := tenantCounts(t, s.db, s.tenant); m != 3 {
					t.Fatalf("%d messages, want the 2 and the cancel's", m)
				}
			}},
	}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					tenant := fmt.Sprintf("user-%d", i)
					limited, err := sessionstore.New(db, sessionstore.Options{UserID: tenant, Limits: c.limits})
					if err != nil {
						t.Fatal(err)
					}
					s := stores{limited: limited, free: newStore(t, db, tenant, 0), db: db, tenant: tenant}
					limitedBy(t, c.run(t, s), c.field)
					c.after(t, s)
				})
			}
		})
	}
}

// Concurrent writers cannot pass a limit together: each checks it in the
// transaction that writes, one after the other where it matters. Before,
// 16 stores of 999 messages into an empty session with room for 1,000
// stored 15,984, and 16 new sessions with room for 5 made 16. Each writer
// has a store of its own (as separate processes would), or all share one
// set of stores (whose calls into one session run in one transaction).
func TestLimitsHoldUnderConcurrency(t *testing.T) {
	t.Parallel()
	const writers = 16
	type write func(s *sessionstore.Store, db *repository.DB, w int) (stored int, err error)
	storeInto := func(key func(w int) string, n int) write {
		return func(s *sessionstore.Store, _ *repository.DB, w int) (int, error) {
			res, err := s.Store(ctx, key(w), someMessages(n, fmt.Sprintf("writer %d", w)), sessionstore.StoreOptions{})
			return len(res.Keys) - res.Existing, err
		}
	}
	cases := []struct {
		name   string
		limits sessionstore.Limits
		shared bool
		setup  func(t *testing.T, s *sessionstore.Store)
		write  write
		field  string
		// want is how many sessions and messages the tenant ends with.
		sessions, msgs int
	}{
		{"16 stores of 999 into an empty session with room for 1,000", sessionstore.Limits{SessionMessages: 1000}, false, nil,
			storeInto(func(int) string { return "big" }, 999), "messages", 1, 999},
		{"the same through one set of stores", sessionstore.Limits{SessionMessages: 1000}, true, nil,
			storeInto(func(int) string { return "big" }, 999), "messages", 1, 999},
		{"16 new sessions with room for 5", sessionstore.Limits{Sessions: 5}, false, nil,
			storeInto(func(w int) string { return fmt.Sprintf("s-%d", w) }, 1), "session_id", 5, 5},
		{"16 new sessions with room for 5, through one set of stores", sessionstore.Limits{Sessions: 5}, true, nil,
			storeInto(func(w int) string { return fmt.Sprintf("s-%d", w) }, 1), "session_id", 5, 5},
		{"8 forks and 8 new sessions with room for 5", sessionstore.Limits{Sessions: 5},
			false, func(t *testing.T, s *sessionstore.Store) { store(t, s, "src", someMessages(2, "q")...) },
			func(s *sessionstore.Store, db *repository.DB, w int) (int, error) {
				if w%2 == 0 {
					_, err := s.Fork(ctx, "src", sessionstore.ForkOptions{})
					return 2, err
				}
				return storeInto(func(w int) string { return fmt.Sprintf("s-%d", w) }, 2)(s, db, w)
			}, "session_id", 5, 10},
		{"8 imports and 8 new sessions with room for 5", sessionstore.Limits{Sessions: 5}, false, nil,
			func(s *sessionstore.Store, db *repository.DB, w int) (int, error) {
				if w%2 == 0 {
					sid, tenant := uuid.New(), s.UserID()
					f := fmt.Sprintf(`{"kind":"session","id":%q,"name":"s","status":"active","tenant_id":%q,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"}`+"\n"+
						`{"kind":"message","id":%q,"session_id":%q,"role":"user","content":"hi","tenant_id":%q,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"}`+"\n",
						sid, tenant, uuid.New(), sid, tenant)
					_, err := transfer.Import(ctx, db, strings.NewReader(f), transfer.ImportOptions{Tenant: tenant, Limits: sessionstore.Limits{Sessions: 5}})
					return 1, err
				}
				return storeInto(func(w int) string { return fmt.Sprintf("s-%d", w) }, 1)(s, db, w)
			}, "session_id", 5, 5},
	}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					tenant := fmt.Sprintf("user-%d", i)
					o := sessionstore.Options{UserID: tenant, Limits: c.limits}
					shared, err := sessionstore.NewStores(db, o)
					if err != nil {
						t.Fatal(err)
					}
					storeOf := func() *sessionstore.Store {
						var s *sessionstore.Store
						var err error
						if c.shared {
							s, err = shared.For(tenant)
						} else {
							s, err = sessionstore.New(db, o)
						}
						if err != nil {
							t.Fatal(err)
						}
						return s
					}
					if c.setup != nil {
						c.setup(t, storeOf())
					}
					_, before := tenantCounts(t, db, tenant)
					var wg sync.WaitGroup
					stored, errs := make([]int, writers), make([]error, writers)
					start := make(chan struct{})
					for w := range writers {
						s := storeOf()
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							stored[w], errs[w] = c.write(s, db, w)
						}()
					}
					close(start)
					wg.Wait()
					acked := before
					for w, err := range errs {
						if err == nil {
							acked += stored[w]
							continue
						}
						var le *sessionstore.LimitError
						if !errors.As(err, &le) || le.Field != c.field {
							t.Fatalf("writer %d: %v; want the limit on %s", w, err, c.field)
						}
					}
					sessions, msgs := tenantCounts(t, db, tenant)
					if msgs != acked {
						t.Errorf("%d messages stored, %d acknowledged", msgs, acked)
					}
					if sessions != c.sessions || msgs != c.msgs {
						t.Errorf("%d sessions and %d messages, want %d and %d", sessions, msgs, c.sessions, c.msgs)
					}
				})
			}
		})
	}
}

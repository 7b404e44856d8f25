package transfer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/transfer"
)

// An import holds the per-user limits as a store does (it ignored them): a
// batch that would give a user more sessions, or a session more of a
// user's messages, than they allow is refused naming the limit, and writes
// nothing; what the database holds already counts, and what an import
// finds there already (a resumed import) adds nothing. The batches are
// small, so that the limits are met across batches of one transaction.
func TestImportHonoursTheLimits(t *testing.T) {
	t.Parallel()
	sessLine := func(id uuid.UUID, tenant string) string {
		return fmt.Sprintf(`{"kind":"session","id":%q,"name":"s","status":"active","tenant_id":%q,"user_id":%q,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"}`, id, tenant, tenant)
	}
	msgLine := func(session uuid.UUID, tenant string, n int) string {
		return fmt.Sprintf(`{"kind":"message","id":%q,"session_id":%q,"role":"user","content":"m%d","tenant_id":%q,"created_at":"2024-01-01T00:00:%02dZ","updated_at":"2024-01-01T00:00:00Z"}`,
			uuid.NewString(), session, n, tenant, n)
	}
	// file is sessions new sessions of tenant with msgs messages each.
	file := func(tenant string, sessions, msgs int) string {
		var ls []string
		for range sessions {
			id := uuid.New()
			ls = append(ls, sessLine(id, tenant))
			for i := range msgs {
				ls = append(ls, msgLine(id, tenant, i))
			}
		}
		return strings.Join(ls, "\n") + "\n"
	}
	type env struct {
		db     *repository.DB
		tenant string
		store  *sessionstore.Store
	}
	cases := []struct {
		name   string
		limits sessionstore.Limits
		// run imports (after whatever it needs) and returns the import's
		// error.
		run   func(t *testing.T, e env, imp func(string) error) error
		field string // the limit met; "" accepted
		// sessions and msgs are the tenant's after.
		sessions, msgs int
	}{
		{"more sessions than a user may own", sessionstore.Limits{Sessions: 2},
			func(t *testing.T, e env, imp func(string) error) error { return imp(file(e.tenant, 3, 1)) }, "session_id", 0, 0},
		{"as many sessions as a user may own", sessionstore.Limits{Sessions: 2},
			func(t *testing.T, e env, imp func(string) error) error { return imp(file(e.tenant, 2, 1)) }, "", 2, 2},
		{"sessions owned already count", sessionstore.Limits{Sessions: 2},
			func(t *testing.T, e env, imp func(string) error) error {
				for _, key := range []string{"a", "b"} {
					if _, err := e.store.Store(context.Background(), key, []models.HistoryMessage{{Role: "user", Content: "x"}}, sessionstore.StoreOptions{}); err != nil {
						t.Fatal(err)
					}
				}
				return imp(file(e.tenant, 1, 1))
			}, "session_id", 2, 2},
		{"more messages than a session may hold", sessionstore.Limits{SessionMessages: 3},
			func(t *testing.T, e env, imp func(string) error) error { return imp(file(e.tenant, 1, 4)) }, "messages", 0, 0},
		{"messages stored already count", sessionstore.Limits{SessionMessages: 3},
			func(t *testing.T, e env, imp func(string) error) error {
				res, err := e.store.Store(context.Background(), "held", []models.HistoryMessage{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}, sessionstore.StoreOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := imp(msgLine(res.SessionID, e.tenant, 1) + "\n"); err != nil {
					t.Fatalf("one more with room for it: %v", err)
				}
				return imp(msgLine(res.SessionID, e.tenant, 2) + "\n")
			}, "messages", 1, 3},
		{"a resumed import adds nothing", sessionstore.Limits{SessionMessages: 3, Sessions: 1},
			func(t *testing.T, e env, imp func(string) error) error {
				f := file(e.tenant, 1, 3)
				if err := imp(f); err != nil {
					t.Fatal(err)
				}
				return imp(f)
			}, "", 1, 3},
	}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			db := d.New(t)
			for i, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					tenant := fmt.Sprintf("user-%d", i)
					s, err := sessionstore.New(db, sessionstore.Options{UserID: tenant})
					if err != nil {
						t.Fatal(err)
					}
					imp := func(f string) error {
						_, err := transfer.Import(context.Background(), db, strings.NewReader(f),
							transfer.ImportOptions{Tenant: tenant, Atomic: true, BatchSize: 2, Limits: c.limits})
						return err
					}
					err = c.run(t, env{db, tenant, s}, imp)
					var le *sessionstore.LimitError
					switch {
					case c.field == "" && err != nil:
						t.Fatalf("refused: %v", err)
					case c.field != "" && (!errors.As(err, &le) || le.Field != c.field || sessionstore.Classify(err).Code != "limit_reached"):
						t.Fatalf("want the limit on %s: %v", c.field, err)
					case c.field != "" && !strings.Contains(err.Error(), "lines "):
						t.Fatalf("the refusal does not say which lines: %v", err)
					}
					var sessions, msgs int
					if err := db.NewRaw("SELECT count(*) FROM sessions WHERE tenant_id = ?", tenant).Scan(context.Background(), &sessions); err != nil {
						t.Fatal(err)
					}
					if err := db.NewRaw("SELECT count(*) FROM messages WHERE tenant_id = ?", tenant).Scan(context.Background(), &msgs); err != nil {
						t.Fatal(err)
					}
					if sessions != c.sessions || msgs != c.msgs {
						t.Fatalf("%d sessions and %d messages, want %d and %d", sessions, msgs, c.sessions, c.msgs)
					}
				})
			}
		})
	}
}

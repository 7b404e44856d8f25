package transfer_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/transfer"
)

// countRows is how many messages and sessions the database holds.
func countRows(t *testing.T, db *repository.DB) (msgs, sessions int) {
	t.Helper()
	ctx := context.Background()
	if err := db.NewRaw("SELECT count(*) FROM messages").Scan(ctx, &msgs); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw("SELECT count(*) FROM sessions").Scan(ctx, &sessions); err != nil {
		t.Fatal(err)
	}
	return
}

// Issue 26: import trusted the file. Each bad file below is refused naming
// its line and field, as a store would refuse it, with nothing of it
// written (--atomic) on every database.
func TestImportIsAsStrictAsStore(t *testing.T) {
	t.Parallel()
	const sid = "6f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f"
	sess := func(tenant string) string {
		return fmt.Sprintf(`{"kind":"session","id":%q,"name":"s","status":"active","tenant_id":%q,"user_id":%q,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"}`, sid, tenant, tenant)
	}
	// The databases' subtests run in parallel and share these builders:
	// the counter that makes ids unique is atomic.
	var counter atomic.Int64
	msgTo := func(session, tenant, extra string) string {
		n := counter.Add(1)
		return fmt.Sprintf(`{"kind":"message","id":"00000000-0000-4000-8000-%012d","session_id":%q,"role":"user","content":"hi","tenant_id":%q,"created_at":"2024-01-01T00:00:0%dZ","updated_at":"2024-01-01T00:00:00Z"%s}`,
			n, session, tenant, n%10, extra)
	}
	msg := func(extra string) string { return msgTo(sid, "mallory", extra) }
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	dup := msg("")
	cases := []struct {
		name, file string
		line       int
		want       string
	}{
		{"another tenant's rows", lines(sess("alice"), msgTo(sid, "alice", "")), 1, `"tenant_id": "alice", but this import acts for "mallory"`},
		{"a null tenant", lines(sess("mallory"), strings.Replace(msg(""), `"tenant_id":"mallory"`, `"tenant_id":null`, 1)), 2, `"tenant_id": null`},
		{"a lone surrogate", lines(sess("mallory"), msg(`,"trace_id":"\ud800"`)), 2, "surrogate"},
		{"a repeated key", lines(sess("mallory"), msg(`,"content":"second"`)), 2, "content"},
		{"a repeated key, escaped", lines(sess("mallory"), msg(`,"con\u0074ent":"second"`)), 2, "content"},
		{"a lone surrogate in nested metadata", lines(sess("mallory"), msg(`,"metadata":{"a":{"b":"\udc00"}}`)), 2, "surrogate"},
		{"year 0", lines(sess("mallory"), strings.Replace(msg(""), `"created_at":"2024`, `"created_at":"0000`, 1)), 2, "year 0"},
		{"an over-long role", lines(sess("mallory"), strings.Replace(msg(""), `"role":"user"`, `"role":"`+strings.Repeat("r", 65)+`"`, 1)), 2, `"role": longer than 64`},
		{"a role outside SPEC §1", lines(sess("mallory"), strings.Replace(msg(""), `"role":"user"`, `"role":"USER"`, 1)), 2, `"USER" is not a role; the roles are user, assistant, tool, system, function, model; did you mean "user"? (--any-role`},
		{"the peer's empty role", lines(sess("mallory"), strings.Replace(msg(""), `"role":"user"`, `"role":""`, 1)), 2, `"" is not a role`},
		{"a NUL in a trace id", lines(sess("mallory"), msg(`,"trace_id":"a\u0000b"`)), 2, "trace_id"},
		{"an id twice", lines(sess("mallory"), dup, dup), 3, "the same id as line 2"},
		{"a missing session", lines(msgTo("7f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f", "mallory", "")), 1, "no session"},
	}
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		for _, c := range cases {
			m0, s0 := countRows(t, db)
			_, err := transfer.Import(ctx, db, strings.NewReader(c.file), transfer.ImportOptions{Tenant: "mallory", Atomic: true, BatchSize: 10})
			fe, ok := models.AsFieldError(err)
			if !ok || fe.Field != fmt.Sprintf("line %d", c.line) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v; want line %d with %q", c.name, err, c.line, c.want)
			}
			if m, s := countRows(t, db); m != m0 || s != s0 {
				t.Errorf("%s: %d messages and %d sessions written", c.name, m-m0, s-s0)
			}
		}

		// --any-role restores a row the peer wrote with a role of its own,
		// and it loads unchanged.
		peerRow := lines(sess("mallory"), strings.Replace(msg(""), `"role":"user"`, `"role":"critic"`, 1))
		if _, err := transfer.Import(ctx, db, strings.NewReader(peerRow), transfer.ImportOptions{Tenant: "mallory", AnyRole: true}); err != nil {
			t.Fatalf("--any-role: %v", err)
		}
		if h, err := newStore(t, db, "mallory", 200).Load(ctx, sid, sessionstore.LoadOptions{}); err != nil || len(h) != 1 || h[0].Role != "critic" {
			t.Fatalf("the restored row: %v %v", h, err)
		}
		if _, err := db.NewRaw("DELETE FROM sessions WHERE id = ?", sid).Exec(ctx); err != nil {
			t.Fatal(err)
		}

		// The forged-tenant attack: alice owns the session; mallory's
		// file, with mallory's own tenant on every row, tries to add to
		// it. Refused; alice's session keeps exactly her message.
		alice := newStore(t, db, "alice", 200)
		if _, err := alice.Store(ctx, sid, []models.HistoryMessage{{Role: "user", Content: "mine"}}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		forged := lines(sess("mallory"), msg(""))
		_, err := transfer.Import(ctx, db, strings.NewReader(forged), transfer.ImportOptions{Tenant: "mallory"})
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != "line 1" || !strings.Contains(err.Error(), "another tenant") {
			t.Fatalf("forged import: %v", err)
		}
		forged = lines(msg(""))
		if _, err := transfer.Import(ctx, db, strings.NewReader(forged), transfer.ImportOptions{Tenant: "mallory"}); err == nil ||
			!strings.Contains(err.Error(), "belongs to another tenant") {
			t.Fatalf("forged message: %v", err)
		}
		h, _ := alice.Load(ctx, sid, sessionstore.LoadOptions{})
		if len(h) != 1 || h[0].Content != "mine" {
			t.Fatalf("alice's session: %v", h)
		}

		// Without --atomic, the batches before a bad line are committed
		// and the error's stats say up to which line.
		n0, _ := countRows(t, db)
		partial := lines(sess2("bob", "8f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f"), msgTo("8f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f", "bob", ""),
			msgTo("8f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f", "bob", ""), strings.Replace(msgTo("8f1c3f2e-8a7b-4c1d-9e2f-0a1b2c3d4e5f", "bob", ""), `"role":"user"`, `"role":"`+strings.Repeat("r", 65)+`"`, 1))
		st, err := transfer.Import(ctx, db, strings.NewReader(partial), transfer.ImportOptions{Tenant: "bob", BatchSize: 2})
		if err == nil || st.CommittedLines != 2 {
			t.Fatalf("partial import: %v, committed lines %d", err, st.CommittedLines)
		}
		if n1, _ := countRows(t, db); n1 != n0+1 {
			t.Fatalf("%d messages committed, want 1", n1-n0)
		}
		// Fixed and run again: the rest comes in, nothing twice.
		fixed := bytes.Replace([]byte(partial), []byte(strings.Repeat("r", 65)), []byte("assistant"), 1)
		st, err = transfer.Import(ctx, db, bytes.NewReader(fixed), transfer.ImportOptions{Tenant: "bob", BatchSize: 2})
		if err != nil || st.Inserted != 2 || st.Skipped != 1 {
			t.Fatalf("resumed import: %+v %v", st, err)
		}
	})
}

func sess2(tenant, id string) string {
	return fmt.Sprintf(`{"kind":"session","id":%q,"name":"s2","status":"active","tenant_id":%q,"created_at":"2024-01-01T00:00:00Z","updated_at":"2024-01-01T00:00:00Z"}`, id, tenant)
}

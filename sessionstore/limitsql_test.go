package sessionstore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// The limits' statements are written once, in limits.go: the store
// function runs each as the Go writers do, with its parameters for the ?
// (or, for a table that may not exist, as an EXECUTE of the text with $n),
// so that a store, a fork and an import count alike and take the same
// tenant's lock.
func TestLimitStatementsAreTheFunctions(t *testing.T) {
	t.Parallel()
	fn := migrations.StoreFunctionSQL()
	with := func(q string, params ...string) string {
		for _, p := range params {
			q = strings.Replace(q, "?", p, 1)
		}
		return q
	}
	for name, want := range map[string]string{
		"sessionsSQL":    with(sessionsSQL, "p_tenant") + " INTO v_held;",
		"tenantLockSQL":  "PERFORM " + strings.TrimPrefix(with(tenantLockSQL, "p_tenant"), "SELECT ") + ";",
		"tenantTokenSQL": "EXECUTE '" + strings.ReplaceAll(repository.Numbered(tenantTokenSQL), "'", "''") + "'",
	} {
		if !strings.Contains(fn, want) {
			t.Errorf("the store function does not run %s as written in limits.go:\n%s", name, want)
		}
	}
}

// The tenant's lock a fork or an import takes in Go is the one the store
// function takes to make a session: a store making one waits while another
// transaction holds it, on every PostgreSQL (on Citus a row, since the
// function runs on the session's worker).
func TestTenantLockIsTheFunctions(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		if d.Name == "sqlite" { // one writer at a time: no lock to share
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := d.New(t)
			s, err := New(db, Options{UserID: "alice", Limits: Limits{Sessions: 5}})
			if err != nil {
				t.Fatal(err)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if err := lockTenant(ctx, BunTx(tx), "alice"); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := s.Store(ctx, "new", []models.HistoryMessage{{Role: "user", Content: "hi"}}, StoreOptions{})
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("a store made a session while the tenant's lock was held elsewhere: %v", err)
			case <-time.After(500 * time.Millisecond):
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// Another tenant's lock is another lock.
			tx, err = db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tx.Rollback() }()
			if err := lockTenant(ctx, BunTx(tx), "bob"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Store(ctx, "newer", []models.HistoryMessage{{Role: "user", Content: "hi"}}, StoreOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

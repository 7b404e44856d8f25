package dbtest

import (
	"context"
	"net/url"
	"testing"

	"github.com/remstore/remstore/repository"
)

// EnvPgBouncerURL names a PgBouncer in transaction pooling mode in front of
// the test PostgreSQL (scripts/pgbouncer.sh); EnvRequirePgBouncer=1 makes
// its absence a failure (CI sets it).
const (
	EnvPgBouncerURL     = "REMSTORE_TEST_PGBOUNCER_URL"
	EnvRequirePgBouncer = "REMSTORE_REQUIRE_PGBOUNCER"
)

// PgBouncerExecMode is what docs/operations.md tells users to add to the
// connection string behind a transaction-mode pooler: statements described
// once and sent unnamed, so no statement outlives its transaction.
const PgBouncerExecMode = "cache_describe"

// NewPgBouncerURL creates a database of its own on the test server (a
// pooler passes no search_path, so a schema will not do) and returns the URL
// that reaches it through PgBouncer, as a user configures it.
func NewPgBouncerURL(t testing.TB) string {
	t.Helper()
	base := serverURL(t, EnvPgBouncerURL, EnvRequirePgBouncer, "PgBouncer")
	name := newDatabase(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse PgBouncer URL: %v", err)
	}
	u.Path = "/" + name
	q := u.Query()
	q.Set("default_query_exec_mode", PgBouncerExecMode)
	u.RawQuery = q.Encode()
	return u.String()
}

// NewDatabaseURL creates an empty database of its own on the test server
// (for what works on whole databases: pg_dump, pg_restore) and returns its
// URL; it is dropped when the test ends.
func NewDatabaseURL(t testing.TB) string {
	t.Helper()
	name := newDatabase(t)
	u, err := url.Parse(PostgresURL(t))
	if err != nil {
		t.Fatalf("parse test database URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func newDatabase(t testing.TB) string {
	t.Helper()
	ctx := context.Background()
	admin, err := repository.Open(ctx, PostgresURL(t))
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	name := "b_" + randHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		// FORCE ends the connections left to it (a pooler's among them).
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)")
		_ = admin.Close()
	})
	return name
}

// NewPgBouncer returns a migrated database reached through PgBouncer.
func NewPgBouncer(t testing.TB) *repository.DB { t.Helper(); return migrated(t, NewPgBouncerURL(t)) }

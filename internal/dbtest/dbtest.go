package dbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// EnvURL names the PostgreSQL server for tests; EnvRequire=1 turns a missing
// server into a failure instead of a skip (CI sets it).
const (
	EnvURL     = "REMSTORE_TEST_DATABASE_URL"
	EnvRequire = "REMSTORE_REQUIRE_PG"
)

// PostgresURL returns the server URL, or skips (fails under EnvRequire=1).
func PostgresURL(t testing.TB) string {
	t.Helper()
	return serverURL(t, EnvURL, EnvRequire, "PostgreSQL")
}

// serverURL reads a test server's URL from env; without it the test skips,
// or fails when require is "1" (CI), naming what is missing.
func serverURL(t testing.TB, env, require, what string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s is not set and %s=1: %s tests must run (use `make test`)", env, require, what)
		}
		t.Skipf("%s not set: skipping %s test (run `make test` to start a server)", env, what)
	}
	return u
}

// NewPostgresURL creates an empty schema and returns a URL whose connections
// use it (search_path), dropping the schema when the test ends.
func NewPostgresURL(t testing.TB) string { t.Helper(); return newSchemaURL(t, PostgresURL(t)) }

func newSchemaURL(t testing.TB, base string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := repository.Open(ctx, base)
	if err != nil {
		t.Fatalf("connect to test PostgreSQL: %v", err)
	}
	schema := "t_" + randHex(8)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		_ = admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse test database URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// OpenRaw opens dbURL without migrating; closed when the test ends.
func OpenRaw(t testing.TB, dbURL string) *repository.DB {
	t.Helper()
	db, err := repository.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("open %s: %v", dbURL, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func migrated(t testing.TB, dbURL string) *repository.DB {
	t.Helper()
	db := OpenRaw(t, dbURL)
	if err := migrations.Up(context.Background(), db); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return db
}

// NewPostgres returns a migrated database in a schema of its own.
func NewPostgres(t testing.TB) *repository.DB { t.Helper(); return migrated(t, NewPostgresURL(t)) }

// NewSQLiteURL returns the path of a new SQLite file in the test's temp dir.
func NewSQLiteURL(t testing.TB) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "remstore.db")
}

// NewSQLite returns a migrated SQLite database in a new file.
func NewSQLite(t testing.TB) *repository.DB { t.Helper(); return migrated(t, NewSQLiteURL(t)) }

// Dialect is one database kind a shared suite runs on.
type Dialect struct {
	Name string
	New  func(testing.TB) *repository.DB
	// URL is a database of its own for the CLI: fresh and unmigrated
	// (the CLI migrates it), except on Citus, where it is also distributed,
	// since distributing is a step of its own (remstore citus distribute).
	URL func(testing.TB) string
}

// Dialects are the kinds every storage suite runs on: PostgreSQL, SQLite
// and, where the test script started them, a Citus cluster and PostgreSQL
// behind PgBouncer in transaction pooling mode.
var Dialects = []Dialect{
	{Name: "postgres", New: NewPostgres, URL: NewPostgresURL},
	{Name: "sqlite", New: NewSQLite, URL: NewSQLiteURL},
	{Name: "citus", New: NewCitus, URL: NewCitusURL},
	{Name: "pgbouncer", New: NewPgBouncer, URL: NewPgBouncerURL},
}

// Each runs fn as a parallel subtest per dialect, each with its own database.
func Each(t *testing.T, fn func(t *testing.T, db *repository.DB)) {
	t.Helper()
	for _, d := range Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, d.New(t))
		})
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// JSONEqual reports whether two JSON documents hold the same value (JSONB
// normalizes whitespace and key order, so bytes cannot be compared).
func JSONEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

package repository_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
)

// A PostgreSQL database Open makes has one pgx pool behind it, shared by bun
// and the store's hot reads, sized by pool_max_conns (a parameter the server
// never sees), closed with the database. SQLite has none.
func TestPoolBehindOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := dbtest.NewPostgresURL(t)
	for _, c := range []struct {
		url  string
		want int32
	}{{pg, repository.DefaultMaxConns}, {pg + "&pool_max_conns=3", 3}} {
		db, err := repository.Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		pool := db.Pool
		if pool == nil || !db.Postgres() {
			t.Fatal("no pool behind a PostgreSQL database")
		}
		if n := pool.Config().MaxConns; n != c.want {
			t.Errorf("%s: max conns %d, want %d", c.url, n, c.want)
		}
		// bun's connections come from the same pool.
		before := pool.Stat().AcquireCount()
		if err := db.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		if pool.Stat().AcquireCount() == before {
			t.Error("bun's query did not take its connection from the pool")
		}
		// The load pool: half as many connections, closed with the database.
		loads := db.LoadPool
		if loads == nil {
			t.Fatal("no load pool on single-node PostgreSQL")
		}
		if n := loads.Config().MaxConns; n != max(1, c.want/2) {
			t.Errorf("%s: load pool max conns %d, want %d", c.url, n, max(1, c.want/2))
		}
		_ = db.Close()
		if err := pool.Ping(ctx); err == nil {
			t.Error("the pool outlived its database")
		}
		if err := loads.Ping(ctx); err == nil {
			t.Error("the load pool outlived its database")
		}
	}
	if lite := dbtest.NewSQLite(t); lite.Pool != nil || lite.LoadPool != nil || lite.Postgres() {
		t.Error("SQLite has a pgx pool")
	}
}

// PgBouncer refuses the load pool's settings at connection ("unsupported
// startup parameter"), also in session mode and with named statements
// allowed: Open then has no load pool, and loads plan per call on the main
// pool instead of failing.
func TestNoLoadPoolWhereSettingsAreRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, err := url.Parse(dbtest.NewPgBouncerURL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("default_query_exec_mode") // named statements: a load pool would be made
	u.RawQuery = q.Encode()
	db, err := repository.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.NamedStatements() {
		t.Fatal("the test needs a connection string with named statements")
	}
	if db.LoadPool != nil {
		t.Error("a load pool whose connections PgBouncer refuses")
	}
	if err := db.PingContext(ctx); err != nil {
		t.Errorf("the main pool: %v", err)
	}
}

// remstore's connections run without JIT: a big session's estimate crossed
// jit_above_cost and compiling took most of a one-row read (a compacted
// load of a 1,000,000-message session: 20 ms, 1 at 100,000).
func TestConnectionsRunWithoutJIT(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	var jit string
	if err := db.NewRaw("SHOW jit").Scan(context.Background(), &jit); err != nil || jit != "off" {
		t.Fatalf("jit = %q, %v", jit, err)
	}
}

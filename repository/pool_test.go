package repository_test

import (
	"context"
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
		_ = db.Close()
		if err := pool.Ping(ctx); err == nil {
			t.Error("the pool outlived its database")
		}
	}
	if lite := dbtest.NewSQLite(t); lite.Pool != nil || lite.Postgres() {
		t.Error("SQLite has a pgx pool")
	}
}

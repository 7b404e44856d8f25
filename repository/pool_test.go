package repository_test

import (
	"context"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
)

// A PostgreSQL database Open makes has one pgx pool behind it, shared by bun
// and the store's hot reads, sized by pool_max_conns, closed with the
// database, its connections on generic plans except on Citus or where the
// URL names plan_cache_mode. SQLite has none.
func TestPoolBehindOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mode := func(t *testing.T, url string) (string, int32) {
		t.Helper()
		db, err := repository.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		pool := repository.Pool(db)
		if pool == nil {
			t.Fatal("no pool behind a PostgreSQL database")
		}
		var m string
		if err := pool.QueryRow(ctx, "SHOW plan_cache_mode").Scan(&m); err != nil {
			t.Fatal(err)
		}
		// bun's connections come from the same pool.
		var bm string
		if err := db.NewRaw("SHOW plan_cache_mode").Scan(ctx, &bm); err != nil || bm != m {
			t.Fatalf("bun sees plan_cache_mode %q (%v), the pool %q", bm, err, m)
		}
		return m, pool.Config().MaxConns
	}
	pg := dbtest.NewPostgresURL(t)
	if m, n := mode(t, pg); m != "force_generic_plan" || n != repository.DefaultMaxConns {
		t.Errorf("PostgreSQL: plan_cache_mode %q, max conns %d", m, n)
	}
	if m, n := mode(t, pg+"&plan_cache_mode=auto&pool_max_conns=3"); m != "auto" || n != 3 {
		t.Errorf("URL settings: plan_cache_mode %q, max conns %d", m, n)
	}
	t.Run("citus", func(t *testing.T) {
		if m, _ := mode(t, dbtest.CitusURL(t)); m != "auto" {
			t.Errorf("Citus: plan_cache_mode %q, want its default", m)
		}
	})

	db, err := repository.Open(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	pool := repository.Pool(db)
	_ = db.Close()
	if err := pool.Ping(ctx); err == nil {
		t.Error("the pool outlived its database")
	}
	if repository.Pool(db) != nil {
		t.Error("a closed database still names its pool")
	}
	if lite := dbtest.NewSQLite(t); repository.Pool(lite) != nil {
		t.Error("SQLite has a pgx pool")
	}
}

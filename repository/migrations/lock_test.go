package migrations_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/repository/migrations"
)

// lockDialects are the databases the lock tests run on: PostgreSQL, through
// PgBouncer in transaction mode, and SQLite.
var lockDialects = []struct {
	name string
	url  func(testing.TB) string
}{{"postgres", dbtest.NewPostgresURL}, {"pgbouncer", dbtest.NewPgBouncerURL}, {"sqlite", dbtest.NewSQLiteURL}}

// While another process holds the migration lock, a process with something
// to migrate waits for it, says once that it waits, and gives up at its
// bound with an error naming the lock; once the lock is free it migrates.
// A database with nothing to migrate does not wait at all.
func TestLockWaitIsBounded(t *testing.T) {
	t.Parallel()
	for _, d := range lockDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := d.url(t)
			release, err := migrations.HoldLock(ctx, dbtest.OpenRaw(t, url), false)
			if err != nil {
				t.Fatal(err)
			}
			db := dbtest.OpenRaw(t, url)
			var said []string
			o := migrations.Options{LockWait: time.Second, Waiting: func(what string) { said = append(said, what) }}
			start := time.Now()
			_, err = migrations.ApplyWith(ctx, db, o)
			took := time.Since(start)
			if !errors.Is(err, migrations.ErrLockWait) || !strings.Contains(err.Error(), "migrate: waited 1s for the migration lock of ") {
				t.Fatalf("a wait for a held lock: %v", err)
			}
			if took < time.Second || took > 5*time.Second {
				t.Errorf("gave up after %v, bound 1s", took)
			}
			if len(said) != 1 || !strings.Contains(err.Error(), said[0]) {
				t.Errorf("said it waits %d times (%q), the error: %v", len(said), said, err)
			}
			t.Logf("%v", err)
			if err := release(); err != nil {
				t.Fatal(err)
			}
			applied, err := migrations.ApplyWith(ctx, db, o)
			if err != nil || len(applied) != len(migrations.All().Sorted()) {
				t.Fatalf("with the lock free: %v %v", applied, err)
			}
			// Up to date: no lock is needed, and none is waited for.
			if release, err = migrations.HoldLock(ctx, dbtest.OpenRaw(t, url), false); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = release() }()
			start = time.Now()
			if applied, err := migrations.ApplyWith(ctx, db, o); err != nil || len(applied) != 0 || time.Since(start) > 500*time.Millisecond {
				t.Fatalf("an up-to-date database while the lock is held: %v %v after %v", applied, err, time.Since(start))
			}
		})
	}
}

// Ten processes migrating one database at once all succeed and apply each
// migration once, also on Citus, where a database distributed at migration
// 6 has the later ones applied to distributed tables.
func TestConcurrentApply(t *testing.T) {
	t.Parallel()
	cases := append(lockDialects[:len(lockDialects):len(lockDialects)], struct {
		name string
		url  func(testing.TB) string
	}{"citus", dbtest.NewCitusRawURL}, struct {
		name string
		url  func(testing.TB) string
	}{"citus_distributed", func(t testing.TB) string {
		u := dbtest.NewCitusRawURL(t)
		db := dbtest.OpenRaw(t, u)
		if err := migrations.UpTo(context.Background(), db, "20260101000006"); err != nil {
			t.Fatal(err)
		}
		if _, err := citus.Distribute(context.Background(), db, citus.DistributeOptions{ShardCount: dbtest.CitusTestShards}); err != nil {
			t.Fatal(err)
		}
		return u
	}})
	for _, d := range cases {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := d.url(t)
			const n = 10
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				db := dbtest.OpenRaw(t, url) // a process's own pool
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, errs[i] = migrations.Apply(ctx, db)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("process %d of %d: %v", i, n, err)
				}
			}
			db := dbtest.OpenRaw(t, url)
			var dup []string
			if err := db.NewRaw("SELECT name FROM "+migrations.Table+" GROUP BY name HAVING count(*) > 1").Scan(ctx, &dup); err != nil && !strings.Contains(err.Error(), "no rows") {
				t.Fatal(err)
			}
			st, err := migrations.Status(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range st {
				if !s.Applied {
					t.Errorf("%s not applied", s.Name)
				}
			}
			if len(dup) > 0 {
				t.Errorf("recorded more than once: %v", dup)
			}
		})
	}
}

// An older remstore locks with bun's row in the locks table: while this
// one migrates, an older one starting waits for it (the row is inserted and
// not committed), and then finds the lock free. A row committed there (an
// older one migrating, or its row left when it died doing so) is named,
// with what to do, instead of migrating beside it.
func TestOlderReleasesWaitForTheLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewPostgresURL(t)
	db := dbtest.OpenRaw(t, url)
	all := migrations.All().Sorted()
	if err := migrations.UpTo(ctx, db, all[len(all)-2].Name); err != nil { // one left to apply
		t.Fatal(err)
	}
	release, err := migrations.HoldLock(ctx, dbtest.OpenRaw(t, url), true)
	if err != nil {
		t.Fatal(err)
	}
	older := migrations.NewMigrator(dbtest.OpenRaw(t, url))
	locked := make(chan error, 1)
	go func() { locked <- older.Lock(ctx) }()
	select {
	case err := <-locked:
		t.Fatalf("an older release took its lock while this one migrates: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatalf("an older release, once the lock is free: %v", err)
	}
	// Its row is committed now: a migration names it.
	if _, err := migrations.Apply(ctx, db); err == nil || !strings.Contains(err.Error(), "DELETE FROM "+migrations.LocksTable) {
		t.Fatalf("a migration beside an older release's lock row: %v", err)
	}
	if err := older.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if applied, err := migrations.Apply(ctx, db); err != nil || len(applied) != 1 {
		t.Fatalf("once the row is gone: %v %v", applied, err)
	}
}

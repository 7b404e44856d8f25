package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/uptrace/bun/migrate"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// Replicas restarting together: 10 processes of the binary, half `serve`
// and half `migrate up`, started at once against one database that is
// empty, partly migrated or up to date, on PostgreSQL, through PgBouncer in
// transaction mode and on one SQLite file. Every process succeeds (a serve
// listens, and exits 0 on SIGTERM): one migrates, the others wait for it;
// every migration is applied once and bun's lock row is not left behind.
// Before, 2 of 20 serves exited "migrations table is already locked" even
// with nothing to migrate.
func TestReplicasMigrateTogether(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "remstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	all := migrations.All().Sorted()
	for _, d := range []struct {
		name string
		url  func(testing.TB) string
	}{{"postgres", dbtest.NewPostgresURL}, {"pgbouncer", dbtest.NewPgBouncerURL}, {"sqlite", dbtest.NewSQLiteURL}} {
		for _, state := range []string{"empty", "partly", "current"} {
			t.Run(d.name+"/"+state, func(t *testing.T) {
				dbURL := d.url(t)
				switch state {
				case "partly": // the first half applied, as an older release left it
					applyFirst(t, dbURL, len(all)/2)
				case "current":
					applyFirst(t, dbURL, len(all))
				}
				outs := startTogether(t, bin, dbURL, 10)
				var failed []string
				var took []time.Duration
				waited := 0
				for i, o := range outs {
					if o.code != 0 {
						failed = append(failed, fmt.Sprintf("%d (%s): exit %d: %s", i, o.cmd, o.code, o.stderr))
					}
					if strings.Contains(o.stderr, "waiting for another process to migrate") {
						waited++
					}
					took = append(took, o.took)
				}
				if len(failed) > 0 {
					t.Fatalf("%d of %d processes failed:\n%s", len(failed), len(outs), strings.Join(failed, "\n"))
				}
				sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
				t.Logf("%d processes all exit 0; %d said they waited; ready after %v (fastest), %v (median), %v (slowest)",
					len(outs), waited, took[0].Round(time.Millisecond), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
				checkAppliedOnce(t, dbURL, len(all))
			})
		}
	}
}

// applyFirst applies the first n migrations (as bun's migrator of a release
// that had only those would).
func applyFirst(t *testing.T, dbURL string, n int) {
	t.Helper()
	db := dbtest.OpenRaw(t, dbURL)
	some := migrate.NewMigrations()
	for _, m := range migrations.All().Sorted()[:n] {
		some.Add(m)
	}
	m := migrate.NewMigrator(db.DB, some, migrate.WithTableName(migrations.Table),
		migrate.WithLocksTableName(migrations.LocksTable), migrate.WithMarkAppliedOnSuccess(true))
	ctx := context.Background()
	if err := m.Init(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
}

type outcome struct {
	cmd    string
	code   int
	took   time.Duration // until it listened (serve) or exited (migrate up)
	stderr string
}

// startTogether starts n processes at once on dbURL, even ones `serve`, odd
// ones `migrate up`; a serve gets SIGTERM once it listens. Each gets 3
// minutes.
func startTogether(t *testing.T, bin, dbURL string, n int) []outcome {
	t.Helper()
	outs := make([]outcome, n)
	var wg sync.WaitGroup
	dir := t.TempDir()
	for i := range n {
		args := []string{"migrate", "up", "--db", dbURL, "--log-level", "info"}
		outs[i].cmd = "migrate up"
		if i%2 == 0 {
			args = []string{"serve", "--addr", "127.0.0.1:0", "--db", dbURL}
			outs[i].cmd = "serve"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "REMSTORE_API_KEYS=replica-key-0123456789abcdef")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cancel()
			var text strings.Builder
			lines := bufio.NewScanner(stderr)
			for lines.Scan() {
				text.WriteString(lines.Text() + "\n")
				if strings.Contains(lines.Text(), "listening on ") {
					outs[i].took = time.Since(start)
					_ = cmd.Process.Signal(syscall.SIGTERM)
				}
			}
			err := cmd.Wait()
			if outs[i].took == 0 {
				outs[i].took = time.Since(start)
			}
			outs[i].stderr = text.String()
			if err != nil {
				outs[i].code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					outs[i].code = ee.ExitCode()
				}
			}
			if outs[i].cmd == "serve" && !strings.Contains(outs[i].stderr, "listening on ") && outs[i].code == 0 {
				outs[i].code = -2 // a serve that never listened
			}
		}()
	}
	wg.Wait()
	return outs
}

// checkAppliedOnce checks that each of the want migrations is recorded once
// and that no lock row is left.
func checkAppliedOnce(t *testing.T, dbURL string, want int) {
	t.Helper()
	ctx := context.Background()
	db, err := repository.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rows []struct {
		Name string `bun:"name"`
		N    int    `bun:"n"`
	}
	if err := db.NewRaw("SELECT name, count(*) AS n FROM "+migrations.Table+" GROUP BY name ORDER BY name").Scan(ctx, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != want {
		t.Errorf("%d migrations recorded, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.N != 1 {
			t.Errorf("migration %s recorded %d times", r.Name, r.N)
		}
	}
	var locks int
	if err := db.NewRaw("SELECT count(*) FROM "+migrations.LocksTable).Scan(ctx, &locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d lock rows left in %s", locks, migrations.LocksTable)
	}
}

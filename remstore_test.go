package remstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// Open makes the tables of a database without them (a new SQLite file,
// an empty PostgreSQL database), so the quick start runs by changing its
// one string; the same store answers the same errors on each.
func TestOpenNewDatabases(t *testing.T) {
	ctx := context.Background()
	dsns := map[string]func(t *testing.T) string{
		"memory":      func(*testing.T) string { return ":memory:" },
		"sqlite file": func(t *testing.T) string { return filepath.Join(t.TempDir(), "new.db") },
		"postgres":    func(t *testing.T) string { return dbtest.NewPostgresURL(t) },
	}
	for name, dsnOf := range dsns {
		t.Run(name, func(t *testing.T) {
			dsn := dsnOf(t)
			st, err := remstore.Open(ctx, dsn, remstore.Options{UserID: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if _, err := st.Append(ctx, "q", []remstore.Message{{Role: remstore.RoleUser, Content: "hi"}}); err != nil {
				t.Fatal(err)
			}
			h, err := st.Load(ctx, "q")
			if err != nil || len(h.Messages) != 1 || h.Last == "" {
				t.Fatalf("load: %+v %v", h, err)
			}
			_, err = st.Append(ctx, "q", []remstore.Message{{Role: "robot", Content: "x"}})
			if !errors.Is(err, remstore.ErrBadRequest) || errors.Is(err, remstore.ErrNotFound) {
				t.Fatalf("an unknown role: %v", err)
			}
			if _, err := st.Lookup(ctx, "session-00000000-0000-0000-0000-000000000000-msg-1"); !errors.Is(err, remstore.ErrNotFound) {
				t.Fatalf("a missing key: %v", err)
			}
			if _, err := st.Pop(ctx, "never"); !errors.Is(err, remstore.ErrNotFound) {
				t.Fatalf("pop of nothing: %v", err)
			}
			if _, err := st.Append(ctx, "q", []remstore.Message{{Role: remstore.RoleUser, Content: "x"}}, remstore.AppendOptions{IfLast: remstore.EmptySession}); !errors.Is(err, remstore.ErrMoved) {
				t.Fatalf("a stale guard: %v", err)
			}
			if _, err := st.Load(ctx, "q", remstore.LoadOptions{}, remstore.LoadOptions{}); !errors.Is(err, remstore.ErrBadRequest) || !strings.Contains(err.Error(), "options") {
				t.Fatalf("two options values: %v", err)
			}
		})
	}
}

// A database whose tables an older build made is not upgraded behind the
// caller's back: Open refuses it naming the command, and Migrate upgrades.
func TestOpenRefusesPendingUpgrades(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	st, err := remstore.Open(ctx, path, remstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lib, ok := remstore.Sessions(st)
	if !ok {
		t.Fatal("no library behind an embedded store")
	}
	_ = lib
	_ = st.Close()
	db, err := repository.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// The newest migration undone in the bookkeeping only: what an older build left.
	if _, err := db.ExecContext(ctx, "DELETE FROM "+migrations.Table+" WHERE id = (SELECT max(id) FROM "+migrations.Table+")"); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	if _, err := remstore.Open(ctx, path, remstore.Options{}); err == nil || !strings.Contains(err.Error(), "remstore migrate up") {
		t.Fatalf("open of an older database: %v", err)
	}
	st, err = remstore.Open(ctx, path, remstore.Options{Migrate: true})
	if err != nil {
		t.Fatalf("open with Migrate: %v", err)
	}
	_ = st.Close()
}

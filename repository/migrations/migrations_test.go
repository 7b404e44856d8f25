package migrations_test

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Every down step undoes its up step exactly: applied one by one and rolled
// back one by one, the schema after rolling back migration k is the schema
// that was there before k was applied (tables, columns, indexes, functions
// with their full text, triggers). Rolling back 7 brings back migration 5's
// store function from its own file.
func TestEachDownStepUndoesItsUp(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		url  func(testing.TB) string
	}{{"postgres", dbtest.NewPostgresURL}, {"sqlite", dbtest.NewSQLiteURL}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.OpenRaw(t, d.url(t))
			all := migrations.All().Sorted()
			var before []string // schema before migration i
			for _, m := range all {
				before = append(before, schema(t, db))
				if err := migrations.UpTo(ctx, db, m.Name); err != nil {
					t.Fatalf("up %s: %v", m.Name, err)
				}
			}
			for i := len(all) - 1; i >= 0; i-- {
				g, err := migrations.NewMigrator(db).Rollback(ctx)
				if err != nil {
					t.Fatalf("down %s: %v", all[i].Name, err)
				}
				if len(g.Migrations) != 1 || g.Migrations[0].Name != all[i].Name {
					t.Fatalf("rolled back %v, want %s alone", g, all[i].Name)
				}
				if got := schema(t, db); got != before[i] {
					t.Errorf("after rolling back %s_%s the schema differs from before it:\n%s", all[i].Name, all[i].Comment, diffLines(before[i], got))
				}
			}
		})
	}
}

// schema describes what the migrations make, as text to compare.
func schema(t *testing.T, db *repository.DB) string {
	t.Helper()
	ctx := context.Background()
	var rows []string
	q := `SELECT type || ' ' || name || ' ' || coalesce(sql, '') FROM sqlite_master
		WHERE name NOT LIKE 'remstore_migration%' AND name NOT LIKE 'sqlite_%' ORDER BY type, name`
	if db.Postgres() {
		q = `SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(column_default, '') FROM information_schema.columns
			WHERE table_schema = current_schema() AND table_name IN ('sessions', 'messages')
		UNION ALL SELECT 'index ' || indexname || ' ' || indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename IN ('sessions', 'messages')
		UNION ALL SELECT 'function ' || pg_get_functiondef(p.oid) FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace
		UNION ALL SELECT 'trigger ' || tgname || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t
			JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal
		ORDER BY 1`
	}
	if err := db.NewRaw(q).Scan(ctx, &rows); err != nil && !strings.Contains(err.Error(), "no rows") {
		t.Fatal(err)
	}
	return strings.Join(rows, "\n")
}

func diffLines(a, b string) string {
	in := map[string]bool{}
	for _, l := range strings.Split(a, "\n") {
		in[l] = true
	}
	out := map[string]bool{}
	for _, l := range strings.Split(b, "\n") {
		out[l] = true
	}
	var d []string
	for l := range in {
		if !out[l] {
			d = append(d, "- "+firstLine(l))
		}
	}
	for l := range out {
		if !in[l] {
			d = append(d, "+ "+firstLine(l))
		}
	}
	return strings.Join(d, "\n")
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

// The indexes are on exactly the expressions the store's queries use
// (repository.SQL): an expression index serves only a query that repeats it.
func TestIndexExpressionsAreTheQueries(t *testing.T) {
	t.Parallel()
	for _, pg := range []bool{true, false} {
		dir := "sqlite"
		if pg {
			dir = "postgres"
		}
		d := repository.SQLFor(pg)
		for file, want := range map[string][]string{
			"20260101000002_indexes.up.sql":         {"((" + d.EntityKey + "))"},
			"20260101000004_partial_indexes.up.sql": {"WHERE " + d.Compaction + ";", "WHERE " + d.Unkeyed + ";"},
		} {
			b, err := os.ReadFile("sql/" + dir + "/" + file)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !strings.Contains(string(b), w) {
					t.Errorf("%s/%s does not use %q", dir, file, w)
				}
			}
		}
	}
}

// A database distributed before migration 7 (which makes the store
// function again) keeps its store function distributed after it.
func TestStoreFunctionStaysDistributed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.OpenRaw(t, dbtest.NewCitusRawURL(t))
	if err := migrations.UpTo(ctx, db, "20260101000006"); err != nil {
		t.Fatal(err)
	}
	if _, err := citus.Distribute(ctx, db, citus.DistributeOptions{ShardCount: dbtest.CitusTestShards}); err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	st, err := citus.Status(ctx, db)
	if err != nil || !st.Distributed {
		t.Fatalf("after migration 7: %+v %v", st, err)
	}
	var keys []string
	if err := db.NewRaw(`SELECT unnest(keys) FROM `+migrations.StoreFunction+`(?, 1, 'x', 'u', 'u', now(), '[{"id":"`+uuid.NewString()+`","role":"user","content":"hi","metadata":{}}]', true, false, NULL)`,
		uuid.New()).Scan(ctx, &keys); err != nil || len(keys) != 1 || !strings.HasSuffix(keys[0], "-msg-0") {
		t.Fatalf("the redistributed function: %v %v", keys, err)
	}
}

// Migrations on a database created by the peer's DDL succeed and change no
// column, with and without the pgvector embedding column.
func TestMigrateOnPeerSchema(t *testing.T) {
	t.Parallel()
	for _, withEmbedding := range []bool{false, true} {
		name := "plain"
		if withEmbedding {
			name = "with_embedding"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.OpenRaw(t, dbtest.NewPostgresURL(t))
			execFile(t, db, "schema.sql")
			if withEmbedding {
				if _, err := db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
					execFile(t, db, "vector_standin.sql")
				}
				execFile(t, db, "embedding.sql")
			}
			before := columns(t, db)
			if err := migrations.Up(ctx, db); err != nil {
				t.Fatalf("migrate on peer schema: %v", err)
			}
			if err := migrations.Up(ctx, db); err != nil {
				t.Fatalf("second migrate: %v", err)
			}
			after := columns(t, db)
			if !reflect.DeepEqual(before, after) {
				t.Errorf("columns changed:\nbefore %v\nafter  %v", before, after)
			}
			if withEmbedding && !strings.Contains(strings.Join(after, " "), "messages.embedding") {
				t.Errorf("embedding column missing: %v", after)
			}
			// remstore stores, loads and looks up on this schema.
			st, err := sessionstore.New(db, sessionstore.Options{UserID: "u", TruncateLength: 5})
			if err != nil {
				t.Fatal(err)
			}
			res, err := st.Store(ctx, "s", []models.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "a long answer here"}}, sessionstore.StoreOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h, err := st.Load(ctx, "s", sessionstore.LoadOptions{}); err != nil || len(h) != 2 || !h[1].Compressed {
				t.Fatalf("load: %+v %v", h, err)
			}
			if full, err := st.Lookup(ctx, res.Keys[1]); err != nil || full != "a long answer here" {
				t.Fatalf("lookup: %q %v", full, err)
			}
		})
	}
}

func execFile(t *testing.T, db *repository.DB, name string) {
	t.Helper()
	b, err := os.ReadFile(fixtures.Path("peer", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(context.Background(), string(b)); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func columns(t *testing.T, db *repository.DB) []string {
	t.Helper()
	var cols []string
	err := db.NewRaw(`SELECT table_name || '.' || column_name || ' ' || data_type || ' ' ||
		coalesce(character_maximum_length::text, '') || ' ' || is_nullable || ' ' || coalesce(column_default, '')
		FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name IN ('sessions', 'messages')
		ORDER BY table_name, ordinal_position`).Scan(context.Background(), &cols)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

package migrations

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"

	"github.com/remstore/remstore/repository"
)

// Table and LocksTable are where bun's migrator keeps its state; the names
// are remstore's so they never clash with the Python service's tables.
const (
	Table      = "remstore_migrations"
	LocksTable = "remstore_migration_locks"
)

// StoreFunction is the PostgreSQL write of a store call (the file the
// latest migration making it includes, StoreFunctionSQL); Signature names it
// for ALTER, DROP and Citus calls.
const (
	StoreFunction = "remstore_store_batch"
	Signature     = StoreFunction + "(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean, text, integer, integer)"
)

// PositionsTable keeps each tenant's count of rows per session for the
// writers (migration 8). On Citus it is distributed by session_id,
// co-located with sessions, so the store function's reads stay on one shard.
const PositionsTable = "remstore_positions"

// ForeignOrderTrigger is the trigger (migration 17, PostgreSQL tables that
// are not distributed) that puts another writer's row after the session's
// newest row when it was stamped before it, within the race window.
const ForeignOrderTrigger = "remstore_order_foreign"

// CallerIDsTable holds one row per caller id stored on Citus, distributed by
// id: the store function takes its row as a lock so that one caller id goes
// into at most one session, which messages' key (session_id, id) cannot say
// there (store_batch_v8.sql). It exists only on a distributed database; on
// PostgreSQL messages' key (id) does the same. A row is 16 bytes and stays
// after its message is purged (a lock token, not a claim: the store
// function's check reads messages).
const CallerIDsTable = "remstore_caller_ids"

// The search tables (migration 16): which messages to index again, and
// each message's words. On Citus both are distributed by session,
// co-located with sessions, as messages are.
const (
	SearchQueueTable = "remstore_search_queue"
	SearchDocsTable  = "remstore_search_docs"
)

//go:embed sql
var files embed.FS

// Splitter separates the statements of one file, as in bun's SQL migrations.
const splitter = "--bun:split"

// statements reads a migration file: its statements, separated by
// "--bun:split" lines, where a line "--include <file>" stands for the
// statements of another file under sql/ (a down step reads the old
// function's file, never a copy of it).
func statements(name string) ([]string, error) {
	b, err := files.ReadFile(path.Join("sql", name))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, part := range strings.Split(string(b), "\n"+splitter+"\n") {
		part = strings.TrimSpace(part)
		if inc, ok := strings.CutPrefix(part, "--include "); ok && !strings.Contains(inc, "\n") {
			more, err := statements(strings.TrimSpace(inc))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			out = append(out, more...)
			continue
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out, nil
}

// StoreFunctionSQL is the current store function's CREATE statement (Citus
// makes it again, local, when it undistributes): the one the latest
// PostgreSQL migration that makes it includes, so the current version is
// written once, in that migration.
func StoreFunctionSQL() string {
	s, err := statements(path.Join("functions", StoreFunctionFile()))
	if err != nil || len(s) != 1 {
		panic(fmt.Sprintf("migrations: embedded store function unreadable: %v", err)) // a build defect
	}
	return s[0]
}

// StoreFunctionFile is the file under sql/functions of the current store
// function, read off the latest up step that includes one.
func StoreFunctionFile() string {
	ents, err := fs.ReadDir(files, "sql/postgres")
	if err != nil {
		panic(err) // embedded: a build defect
	}
	current := ""
	for _, e := range ents { // ReadDir sorts by name: migrations in order
		if !strings.HasSuffix(e.Name(), ".up.sql") {
			continue
		}
		b, err := files.ReadFile(path.Join("sql/postgres", e.Name()))
		if err != nil {
			panic(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if f, ok := strings.CutPrefix(strings.TrimSpace(l), "--include functions/"); ok && strings.HasPrefix(f, "store_batch_v") {
				current = f
			}
		}
	}
	if current == "" {
		panic("migrations: no migration makes the store function") // a build defect
	}
	return current
}

// dialectDir is where a dialect's files are: sql/postgres or sql/sqlite.
func dialectDir(db bun.IDB) string {
	if repository.IsPostgres(db) {
		return "postgres"
	}
	return "sqlite"
}

// All returns remstore's migrations: one per name found in sql/postgres or
// sql/sqlite (NAME_COMMENT.up.sql and .down.sql). A migration without a file
// for a dialect does nothing there. Each runs in one transaction.
func All() *migrate.Migrations {
	type entry struct{ name, comment string }
	seen := map[string]entry{}
	for _, dir := range []string{"postgres", "sqlite"} {
		ents, err := fs.ReadDir(files, path.Join("sql", dir))
		if err != nil {
			panic(err) // embedded: a build defect
		}
		for _, e := range ents {
			base, ok := strings.CutSuffix(e.Name(), ".up.sql")
			if !ok {
				continue
			}
			name, comment, _ := strings.Cut(base, "_")
			seen[name] = entry{name, comment}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	ms := migrate.NewMigrations()
	for _, n := range names {
		e := seen[n]
		ms.Add(migrate.Migration{Name: e.name, Comment: e.comment,
			Up: step(e.name + "_" + e.comment + ".up.sql"), Down: step(e.name + "_" + e.comment + ".down.sql")})
	}
	return ms
}

// step runs one migration file of the database's dialect in a transaction,
// with the Go a few migrations need around their SQL.
func step(file string) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
	return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
		db := m.DB()
		name := path.Join(dialectDir(db), file)
		if _, err := fs.Stat(files, path.Join("sql", name)); err != nil {
			return nil // nothing to do on this dialect
		}
		stmts, err := statements(name)
		if err != nil {
			return err
		}
		distributed := false
		if repository.IsPostgres(db) {
			if distributed, err = messagesDistributed(ctx, db); err != nil {
				return err
			}
		}
		// The tenant guard never goes on (or comes off) distributed tables:
		// Citus refuses triggers there (tenant_guard.go).
		if distributed && strings.Contains(file, "_tenant_guard.") {
			return nil
		}
		// Nor does the order of other writers' rows (migration 17): the
		// Python service cannot write to distributed tables.
		if distributed && strings.Contains(file, "_foreign_order.") {
			return nil
		}
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			fnDistributed := false
			// Only a migration that makes the store function again has to
			// distribute it again (and Citus refuses to, in a transaction that
			// also built an index across the shards).
			remakesFn := strings.Contains(strings.Join(stmts, "\n"), "FUNCTION "+StoreFunction)
			if distributed && remakesFn {
				// By name: a migration may replace the function by one of
				// another signature. In the schemas on the path only: another
				// schema's store on the same cluster is not this one's.
				if err := tx.NewRaw(`SELECT EXISTS (SELECT 1 FROM pg_dist_object d JOIN pg_proc p ON p.oid = d.objid
					JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = ? AND n.nspname = ANY (current_schemas(false)))`,
					StoreFunction).Scan(ctx, &fnDistributed); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
			}
			for _, s := range stmts {
				if _, err := tx.ExecContext(ctx, s); err != nil {
					return fmt.Errorf("%s: %s: %w", file, firstLine(s), err)
				}
			}
			// A table made on a distributed database is distributed with
			// the others, as remstore citus distribute would.
			if distributed && strings.HasSuffix(file, "_positions.up.sql") {
				if err := DistributeBySession(ctx, tx, PositionsTable); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
			}
			if repository.IsPostgres(db) && strings.HasSuffix(file, "_search_words.up.sql") {
				// Their kind follows messages'; the tables follow it too.
				if err := SearchTriggers(ctx, tx, distributed); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
				if distributed {
					if err := DistributeBySession(ctx, tx, SearchQueueTable, SearchDocsTable); err != nil {
						return fmt.Errorf("%s: %w", file, err)
					}
				}
			}
			if distributed && strings.HasSuffix(file, "_caller_ids.up.sql") {
				if err := CreateCallerIDs(ctx, tx); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
			}
			// A store function made again on a database whose function was
			// distributed is distributed again, as remstore citus distribute
			// left it.
			if fnDistributed {
				if _, _, err := installed(ctx, tx); errors.Is(err, sql.ErrNoRows) {
					return nil
				} else if err != nil {
					return err
				}
				return DistributeStoreFunction(ctx, tx)
			}
			return nil
		})
	}
}

// DistributeStoreFunction pins the store function's search_path to its
// schema (a delegated call runs on a worker, whose connections have their own
// search_path), lets it plan as PostgreSQL chooses, and distributes it by its session argument, co-located with
// sessions: a call outside a transaction block runs on the session's worker.
func DistributeStoreFunction(ctx context.Context, db bun.IDB) error {
	Signature, schema, err := installed(ctx, db) // the installed one: a database may be at an older migration
	if err != nil {
		return fmt.Errorf("find %s: %w", StoreFunction, err)
	}
	if _, err := db.ExecContext(ctx, "ALTER FUNCTION "+Signature+" SET search_path = ?", bun.Ident(schema)); err != nil {
		return fmt.Errorf("pin the search_path of %s: %w", StoreFunction, err)
	}
	// Citus plans each statement for the shard its session names, which a
	// generic plan hides ("could not create distributed plan"): the
	// distributed function plans as PostgreSQL chooses.
	for _, setting := range []string{"plan_cache_mode", "enable_seqscan"} {
		if _, err := db.ExecContext(ctx, "ALTER FUNCTION "+Signature+" RESET "+setting); err != nil {
			return fmt.Errorf("custom plans for %s: %w", StoreFunction, err)
		}
	}
	if _, err := db.ExecContext(ctx, "SELECT create_distributed_function(?, '$1', colocate_with := 'sessions')", Signature); err != nil {
		return fmt.Errorf("distribute %s: %w", StoreFunction, err)
	}
	return nil
}

// installed is the store function the database has, whatever migration
// made it: its signature (as ALTER and Citus take it) and its schema.
func installed(ctx context.Context, db bun.IDB) (signature, schema string, err error) {
	err = db.NewRaw(`SELECT p.oid::regprocedure::text, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		WHERE p.proname = ? AND n.nspname = ANY (current_schemas(false)) ORDER BY array_position(current_schemas(false), n.nspname) LIMIT 1`,
		StoreFunction).Scan(ctx, &signature, &schema)
	return signature, schema, err
}

// DistributeBySession makes tables distributed tables by session_id,
// co-located with sessions, as remstore citus distribute leaves the
// tables beside messages: a migration that makes one on a distributed
// database calls it.
func DistributeBySession(ctx context.Context, db bun.IDB, tables ...string) error {
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "SELECT create_distributed_table(?, 'session_id', colocate_with := 'sessions')", t); err != nil {
			return fmt.Errorf("distribute %s: %w", t, err)
		}
	}
	return nil
}

// CreateCallerIDs makes CallerIDsTable, distributed by id, on a Citus
// database whose messages are distributed (or about to be, in the same
// transaction). It is idempotent.
func CreateCallerIDs(ctx context.Context, db bun.IDB) error {
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+CallerIDsTable+" (id uuid PRIMARY KEY)"); err != nil {
		return fmt.Errorf("create %s: %w", CallerIDsTable, err)
	}
	var done bool
	if err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass(?))", CallerIDsTable).Scan(ctx, &done); err != nil {
		return fmt.Errorf("%s: %w", CallerIDsTable, err)
	}
	if done {
		return nil
	}
	if _, err := db.ExecContext(ctx, "SELECT create_distributed_table(?, 'id', colocate_with := 'none')", CallerIDsTable); err != nil {
		return fmt.Errorf("distribute %s: %w", CallerIDsTable, err)
	}
	return nil
}

// messagesDistributed reports whether messages is a Citus distributed table.
func messagesDistributed(ctx context.Context, db bun.IDB) (bool, error) {
	var citus, distributed bool
	if err := db.NewRaw(`SELECT to_regclass('pg_dist_partition') IS NOT NULL`).Scan(ctx, &citus); err != nil || !citus {
		return false, err
	}
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass('messages'))`).Scan(ctx, &distributed)
	return distributed, err
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			return l
		}
	}
	return s
}

// NewMigrator returns bun's migrator over remstore's migrations.
func NewMigrator(db *repository.DB) *migrate.Migrator {
	return migrate.NewMigrator(db.DB, All(),
		migrate.WithTableName(Table),
		migrate.WithLocksTableName(LocksTable),
		migrate.WithMarkAppliedOnSuccess(true))
}

// Up applies every pending migration.
func Up(ctx context.Context, db *repository.DB) error {
	_, err := Apply(ctx, db)
	return err
}

// Apply is Up that says which migrations it applied (none on a database
// already up to date), so a server can log that it changed the schema.
func Apply(ctx context.Context, db *repository.DB) ([]string, error) {
	return ApplyWith(ctx, db, Options{})
}

// ApplyWith is Apply with options. A database with every migration applied
// is left as it is at once, with no lock. Otherwise it takes the migration
// lock (lock.go), waiting while another process holds it, and reads again
// what is applied: what that process applied meanwhile is not applied twice.
func ApplyWith(ctx context.Context, db *repository.DB, o Options) ([]string, error) {
	if current, err := upToDate(ctx, db); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	} else if current {
		return nil, nil
	}
	var names []string
	err := locked(ctx, db, o, func(m *migrate.Migrator) error {
		g, err := m.Migrate(ctx)
		if err != nil {
			return err
		}
		if g != nil {
			for _, mg := range g.Migrations {
				names = append(names, mg.Name)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return names, nil
}

// Rollback undoes the last group of migrations applied, holding the
// migration lock as Apply does.
func Rollback(ctx context.Context, db *repository.DB) (*migrate.MigrationGroup, error) {
	var g *migrate.MigrationGroup
	err := locked(ctx, db, Options{}, func(m *migrate.Migrator) (err error) {
		g, err = m.Rollback(ctx)
		return err
	})
	return g, err
}

// upToDate reports whether every migration is applied (false also when the
// migrations table is not there yet).
func upToDate(ctx context.Context, db *repository.DB) (bool, error) {
	if ok, err := tableExists(ctx, db, Table); err != nil || !ok {
		return false, err
	}
	ms, err := NewMigrator(db).MigrationsWithStatus(ctx)
	if err != nil {
		return false, nil // the locked path reads it again and says what is wrong
	}
	return len(ms.Unapplied()) == 0, nil
}

// locked runs fn holding the migration lock, after bun's tables are made
// (also under the lock: two processes making them at once collide).
func locked(ctx context.Context, db *repository.DB, o Options, fn func(*migrate.Migrator) error) (err error) {
	h, err := lock(ctx, db, o)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := h.release(); err == nil {
			err = rerr
		}
	}()
	m := NewMigrator(db)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("init: %w", err)
	}
	if err := h.claim(ctx); err != nil {
		return err
	}
	return fn(m)
}

// Check returns repository.ErrNotMigrated unless db holds the sessions and
// messages tables (made by Up, or by the Python service's install script). Read-only
// commands call it instead of migrating.
func Check(ctx context.Context, db bun.IDB) error {
	for _, t := range []string{"sessions", "messages"} {
		ok, err := tableExists(ctx, db, t)
		if err != nil {
			return err
		}
		if !ok {
			return repository.ErrNotMigrated
		}
	}
	return nil
}

// tableExists reports whether a table of that name is on the search path.
func tableExists(ctx context.Context, db bun.IDB, name string) (bool, error) {
	q := "SELECT count(*) FROM information_schema.tables WHERE table_schema = ANY (current_schemas(false)) AND table_name = ?"
	if !repository.IsPostgres(db) {
		q = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?"
	}
	var n int
	if err := db.NewRaw(q, name).Scan(ctx, &n); err != nil {
		return false, fmt.Errorf("check table %s: %w", name, err)
	}
	return n > 0, nil
}

// State is one migration and whether the database has it.
type State struct {
	Name    string `json:"name"`
	Comment string `json:"comment"`
	Applied bool   `json:"applied"`
}

// Status lists remstore's migrations and which are applied, without
// creating anything: on a database remstore never migrated, all are pending.
func Status(ctx context.Context, db *repository.DB) ([]State, error) {
	applied := map[string]bool{}
	if ok, err := tableExists(ctx, db, Table); err != nil {
		return nil, err
	} else if ok {
		ms, err := NewMigrator(db).MigrationsWithStatus(ctx)
		if err != nil {
			return nil, fmt.Errorf("migration status: %w", err)
		}
		for _, m := range ms {
			applied[m.Name] = m.IsApplied()
		}
	}
	var out []State
	for _, m := range All().Sorted() {
		out = append(out, State{Name: m.Name, Comment: m.Comment, Applied: applied[m.Name]})
	}
	return out, nil
}

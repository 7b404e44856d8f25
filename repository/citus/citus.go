package citus

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// Scale-out on Citus. Every call of the session store names one session and
// every key names its session, so the tables shard by session: sessions by
// id, messages by session_id, co-located, so that a session and its messages
// live on one worker and every store, load and lookup is a single-shard
// query. Citus needs every primary key and unique index of a distributed
// table to include its distribution column, so messages' key becomes
// (session_id, id). The store function is distributed by its session
// argument: a call outside a transaction block runs on the worker that holds
// the session (one hop from the coordinator, every statement local there).

// ErrNoCitus is returned by Distribute on a database without the citus
// extension.
var ErrNoCitus = errors.New("the database has no citus extension: run CREATE EXTENSION citus on a Citus coordinator (remstore distributes its tables only on Citus)")

// Table is one of remstore's tables as Citus sees it.
type Table struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`                          // "local", "distributed", "reference or local", or "missing" (not migrated yet)
	Column     string   `json:"distribution_column,omitempty"` // empty when local
	Colocation int      `json:"colocation_id,omitempty"`
	Shards     int      `json:"shard_count,omitempty"`
	PrimaryKey []string `json:"primary_key"`
}

// State is what `remstore citus status` reports.
type State struct {
	Version     string  `json:"citus_version"` // "" when the extension is missing
	Workers     int     `json:"workers"`
	Tables      []Table `json:"tables"`
	Function    bool    `json:"store_function_distributed"`
	CallerIDs   bool    `json:"caller_ids_distributed"` // migrations.CallerIDsTable
	Distributed bool    `json:"distributed"`            // every table distributed, co-located; function distributed
}

// DistributeOptions adjust Distribute. ShardCount 0 keeps Citus's
// citus.shard_count (32 by default).
type DistributeOptions struct {
	ShardCount int
}

// Status reads the distribution of remstore's tables.
func Status(ctx context.Context, db bun.IDB) (State, error) {
	var st State
	if !repository.IsPostgres(db) {
		return st, nil
	}
	v, err := citusVersion(ctx, db)
	if err != nil {
		return st, err
	}
	st.Version = v
	for _, d := range distribution {
		t := d.table
		ct := Table{Name: t, Type: "local"}
		var exists bool
		if err := db.NewRaw("SELECT to_regclass(?) IS NOT NULL", t).Scan(ctx, &exists); err != nil {
			return st, fmt.Errorf("citus status of %s: %w", t, err)
		}
		if !exists { // a database not yet migrated to the table's migration
			ct.Type = "missing"
			st.Tables = append(st.Tables, ct)
			continue
		}
		pk, err := repository.PrimaryKey(ctx, db, t)
		if err != nil {
			return st, err
		}
		ct.PrimaryKey = pk
		if v != "" {
			// pg_dist_partition is in pg_catalog (the citus_tables view is in
			// public, which a schema's search_path may leave out).
			var method, col sql.NullString
			var coloc, shards sql.NullInt64
			err := db.NewRaw(`SELECT p.partmethod::text, column_to_column_name(p.logicalrelid, p.partkey), p.colocationid,
					(SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid)
				FROM pg_dist_partition p WHERE p.logicalrelid = to_regclass(?)`, t).Scan(ctx, &method, &col, &coloc, &shards)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return st, fmt.Errorf("citus status of %s: %w", t, err)
			}
			if method.Valid {
				ct.Type = map[string]string{"h": "distributed", "n": "reference or local"}[method.String]
				ct.Column, ct.Colocation, ct.Shards = col.String, int(coloc.Int64), int(shards.Int64)
			}
		}
		st.Tables = append(st.Tables, ct)
	}
	if v == "" {
		return st, nil
	}
	if err := db.NewRaw("SELECT count(*) FROM citus_get_active_worker_nodes()").Scan(ctx, &st.Workers); err != nil {
		return st, fmt.Errorf("citus workers: %w", err)
	}
	var n int
	if err := db.NewRaw(`SELECT count(*) FROM pg_dist_object
		WHERE classid = 'pg_proc'::regclass AND objid = to_regprocedure(?)::oid AND distribution_argument_index IS NOT NULL`,
		migrations.Signature).Scan(ctx, &n); err != nil {
		return st, fmt.Errorf("citus function status: %w", err)
	}
	st.Function = n > 0
	if err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass(?))",
		migrations.CallerIDsTable).Scan(ctx, &st.CallerIDs); err != nil {
		return st, fmt.Errorf("citus status of %s: %w", migrations.CallerIDsTable, err)
	}
	st.Distributed = st.Function && st.CallerIDs
	for _, t := range st.Tables {
		st.Distributed = st.Distributed && (t.Type == "missing" || t.Type == "distributed" && t.Colocation == st.Tables[0].Colocation)
	}
	return st, nil
}

func citusVersion(ctx context.Context, db bun.IDB) (string, error) {
	var v string
	err := db.NewRaw("SELECT extversion FROM pg_extension WHERE extname = 'citus'").Scan(ctx, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("citus version: %w", err)
	}
	return v, nil
}

// distribution says, per table, the column it is distributed by.
var distribution = []struct{ table, column, colocate string }{
	{"sessions", "id", ""},
	{"messages", "session_id", "sessions"},
	{migrations.PositionsTable, "session_id", "sessions"},
	{migrations.SearchQueueTable, "session_id", "sessions"},
	{migrations.SearchDocsTable, "session_id", "sessions"},
}

// distributeOrder is the order Distribute takes the tables in: sessions,
// then the tables beside messages, then messages, whose rows, copied into
// its shards, fire its triggers there, which write to those tables.
func distributeOrder() []int {
	order := []int{0}
	for i := 2; i < len(distribution); i++ {
		order = append(order, i)
	}
	return append(order, 1)
}

// Distribute makes sessions and messages distributed tables on Citus,
// co-located by session, and distributes the store function by its session
// argument. Existing rows move to the workers. It is idempotent: what is
// already distributed is left as it is. It returns the steps it took.
func Distribute(ctx context.Context, db *repository.DB, o DistributeOptions) ([]string, error) {
	if !repository.IsPostgres(db) {
		return nil, errors.New("distribute: SQLite cannot be distributed; Citus is PostgreSQL")
	}
	if err := migrations.Check(ctx, db); err != nil {
		return nil, err
	}
	if v, err := citusVersion(ctx, db); err != nil {
		return nil, err
	} else if v == "" {
		return nil, ErrNoCitus
	}
	if o.ShardCount < 0 || o.ShardCount > 64000 {
		return nil, fmt.Errorf("distribute: shard count %d out of range 1..64000", o.ShardCount)
	}
	st, err := Status(ctx, db)
	if err != nil {
		return nil, err
	}
	if st.Workers == 0 {
		return nil, errors.New("distribute: the Citus coordinator has no active worker nodes (citus_add_node)")
	}
	if err := checkForeignKeys(ctx, db, st); err != nil {
		return nil, err
	}
	var steps []string
	exec := func(ctx context.Context, tx bun.IDB, step, q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("distribute: %s: %w", step, err)
		}
		steps = append(steps, step)
		return nil
	}
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// One shard at a time: DDL on a table with a foreign key to a
		// distributed table must not open parallel connections in a block.
		if _, err := tx.ExecContext(ctx, "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"); err != nil {
			return err
		}
		// The count of other writers' rows (migration 14) stays on messages
		// when it is distributed: its trigger only updates the co-located
		// shard of remstore_positions, which Citus allows once told so.
		if _, err := tx.ExecContext(ctx, "SET LOCAL citus.enable_unsafe_triggers TO on"); err != nil {
			return err
		}
		// The tenant guard's triggers cannot stay on distributed tables
		// (tenant_guard.go): dropped from the tables still local (a
		// distributed one has none, and refuses even DROP TRIGGER IF EXISTS).
		local := map[string]bool{}
		for i, d := range distribution {
			local[d.table] = st.Tables[i].Type == "local"
		}
		for _, tr := range migrations.TenantGuardTriggers() {
			if !local[tr[0]] {
				continue
			}
			if _, err := tx.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+tr[1]+" ON "+tr[0]); err != nil {
				return fmt.Errorf("distribute: drop the tenant guard: %w", err)
			}
		}
		// So cannot the order of other writers' rows (migration 17), which
		// the Python service, the writer it serves, cannot use there.
		if local["messages"] {
			if _, err := tx.ExecContext(ctx, "DROP TRIGGER IF EXISTS "+migrations.ForeignOrderTrigger+" ON messages"); err != nil {
				return fmt.Errorf("distribute: drop %s: %w", migrations.ForeignOrderTrigger, err)
			}
		}
		if local["messages"] && searchAt(st) {
			// Before the table is distributed: Citus keeps no transition table.
			if err := migrations.SearchTriggers(ctx, tx, true); err != nil {
				return fmt.Errorf("distribute: %w", err)
			}
		}
		for _, i := range distributeOrder() {
			d := distribution[i]
			if st.Tables[i].Type != "local" { // distributed, or not there yet (migration 8 distributes it then)
				continue
			}
			if err := widenKeys(ctx, tx, d.table, d.column, exec); err != nil {
				return err
			}
			q := "SELECT create_distributed_table(?, ?, colocate_with := ?)"
			args := []any{d.table, d.column, "none"}
			if d.colocate != "" {
				args[2] = d.colocate
			} else if o.ShardCount > 0 {
				q = "SELECT create_distributed_table(?, ?, colocate_with := ?, shard_count := ?)"
				args = append(args, o.ShardCount)
			}
			if err := exec(ctx, tx, fmt.Sprintf("distribute %s by %s", d.table, d.column), q, args...); err != nil {
				return err
			}
		}
		if !st.CallerIDs {
			if err := migrations.CreateCallerIDs(ctx, tx); err != nil {
				return fmt.Errorf("distribute: %w", err)
			}
			steps = append(steps, "distribute "+migrations.CallerIDsTable+" by id")
		}
		return nil
	})
	if err != nil {
		return steps, err
	}
	if !st.Function {
		if err := migrations.DistributeStoreFunction(ctx, db); err != nil {
			return steps, fmt.Errorf("distribute: %w", err)
		}
		steps = append(steps, "distribute "+migrations.StoreFunction+" by its session")
	}
	return steps, nil
}

// checkForeignKeys says which tables hold foreign keys into sessions or
// messages while either is still local, before anything changes: Citus
// keeps no foreign key from a local table into a distributed one (the
// Python service's full schema has such tables).
func checkForeignKeys(ctx context.Context, db *repository.DB, st State) error {
	if st.Tables[0].Type != "local" && st.Tables[1].Type != "local" {
		return nil
	}
	var refs []string
	err := db.NewRaw(`SELECT conrelid::regclass::text || '.' || conname || ' -> ' || confrelid::regclass::text
		FROM pg_constraint WHERE contype = 'f'
		AND confrelid IN (to_regclass('sessions'), to_regclass('messages'))
		AND conrelid NOT IN (to_regclass('sessions'), to_regclass('messages')) ORDER BY 1`).Scan(ctx, &refs)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("distribute: foreign keys: %w", err)
	}
	if len(refs) > 0 {
		return fmt.Errorf("distribute: other tables have foreign keys into sessions or messages (%s); Citus cannot keep a foreign key from a local table into a distributed one: distribute those tables by session too, or drop the keys", strings.Join(refs, ", "))
	}
	return nil
}

// widenKeys makes table's primary key and unique indexes include col, as
// Citus requires of a distributed table: the primary key becomes (col, ...)
// and every other unique index gains col as its first column.
func widenKeys(ctx context.Context, tx bun.Tx, table, col string,
	exec func(context.Context, bun.IDB, string, string, ...any) error) error {
	type idx struct {
		Name, Def  string
		Primary    bool
		Constraint sql.NullString
		Cols       []string `bun:",array"`
	}
	var idxs []idx
	err := tx.NewRaw(`SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS def, i.indisprimary AS primary,
			con.conname AS constraint,
			ARRAY(SELECT a.attname FROM unnest(i.indkey) AS k(attnum) JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum) AS cols
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
		WHERE i.indrelid = to_regclass(?) AND i.indisunique`, table).Scan(ctx, &idxs)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("distribute: unique indexes of %s: %w", table, err)
	}
	for _, x := range idxs {
		has := false
		for _, c := range x.Cols {
			has = has || c == col
		}
		if has {
			continue
		}
		names := append([]string{col}, x.Cols...)
		cols := make([]string, len(names))
		for i := range names {
			cols[i] = quoteIdent(names[i])
		}
		list, plain := strings.Join(cols, ", "), strings.Join(names, ", ")
		switch {
		case x.Primary:
			if err := exec(ctx, tx, fmt.Sprintf("primary key of %s becomes (%s)", table, plain),
				fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s, ADD CONSTRAINT %s PRIMARY KEY (%s)",
					quoteIdent(table), quoteIdent(x.Constraint.String), quoteIdent(x.Constraint.String), list)); err != nil {
				return err
			}
		case x.Constraint.Valid:
			if err := exec(ctx, tx, fmt.Sprintf("unique constraint %s of %s becomes (%s)", x.Constraint.String, table, plain),
				fmt.Sprintf("ALTER TABLE %s DROP CONSTRAINT %s, ADD CONSTRAINT %s UNIQUE (%s)",
					quoteIdent(table), quoteIdent(x.Constraint.String), quoteIdent(x.Constraint.String), list)); err != nil {
				return err
			}
		default:
			// An expression or partial unique index keeps its text; the
			// column goes in front of its key list.
			open := strings.Index(x.Def, " (")
			if open < 0 {
				return fmt.Errorf("distribute: cannot read unique index %s: %s", x.Name, x.Def)
			}
			def := x.Def[:open+2] + quoteIdent(col) + ", " + x.Def[open+2:]
			if err := exec(ctx, tx, fmt.Sprintf("unique index %s of %s gains %s", x.Name, table, col),
				"DROP INDEX "+quoteIdent(x.Name)); err != nil {
				return err
			}
			if err := exec(ctx, tx, "recreate "+x.Name, def); err != nil {
				return err
			}
		}
	}
	return nil
}

// Undistribute brings sessions and messages back to the coordinator as local
// tables (Citus moves the rows back) and restores messages' primary key
// (id) when the ids are unique. The widened unique indexes stay widened.
func Undistribute(ctx context.Context, db *repository.DB) ([]string, error) {
	if !repository.IsPostgres(db) {
		return nil, errors.New("undistribute: SQLite is never distributed")
	}
	st, err := Status(ctx, db)
	if err != nil {
		return nil, err
	}
	if st.Version == "" {
		return nil, ErrNoCitus
	}
	var steps []string
	if st.Function {
		// Citus has no undistribute for functions: the function is dropped
		// everywhere and made again, local, from migration 5's text.
		if _, err := db.ExecContext(ctx, "DROP FUNCTION "+migrations.Signature); err != nil {
			return steps, fmt.Errorf("undistribute: drop %s: %w", migrations.StoreFunction, err)
		}
		if _, err := db.ExecContext(ctx, migrations.StoreFunctionSQL()); err != nil {
			return steps, fmt.Errorf("undistribute: recreate %s: %w", migrations.StoreFunction, err)
		}
		steps = append(steps, "recreate "+migrations.StoreFunction+" as a local function")
	}
	if st.CallerIDs { // lock tokens only: messages' key (id) does their work again
		if _, err := db.ExecContext(ctx, "DROP TABLE "+migrations.CallerIDsTable); err != nil {
			return steps, fmt.Errorf("undistribute: drop %s: %w", migrations.CallerIDsTable, err)
		}
		steps = append(steps, "drop "+migrations.CallerIDsTable)
	}
	for _, t := range st.Tables[2:] { // the tables beside sessions and messages
		if t.Type != "distributed" {
			continue
		}
		if _, err := db.ExecContext(ctx, "SELECT undistribute_table(?)", t.Name); err != nil {
			return steps, fmt.Errorf("undistribute: %s: %w", t.Name, err)
		}
		steps = append(steps, "undistribute "+t.Name)
	}
	if st.Tables[0].Type != "local" || st.Tables[1].Type != "local" {
		if _, err := db.ExecContext(ctx, "SELECT undistribute_table('sessions', cascade_via_foreign_keys := true)"); err != nil {
			return steps, fmt.Errorf("undistribute: tables: %w", err)
		}
		steps = append(steps, "undistribute sessions and messages")
		if searchAt(st) {
			if err := migrations.SearchTriggers(ctx, db, false); err != nil {
				return steps, fmt.Errorf("undistribute: %w", err)
			}
		}
	}
	if pk := st.Tables[1].PrimaryKey; len(pk) == 2 && pk[0] == "session_id" && pk[1] == "id" {
		var name string
		if err := db.NewRaw("SELECT conname FROM pg_constraint WHERE conrelid = to_regclass('messages') AND contype = 'p'").Scan(ctx, &name); err != nil {
			return steps, fmt.Errorf("undistribute: primary key: %w", err)
		}
		_, err := db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE messages DROP CONSTRAINT %s, ADD CONSTRAINT %s PRIMARY KEY (id)", quoteIdent(name), quoteIdent(name)))
		if err != nil {
			return steps, fmt.Errorf("undistribute: primary key of messages stays (session_id, id): %w", err)
		}
		steps = append(steps, "primary key of messages becomes (id)")
	}
	return steps, nil
}

// searchAt: the database has search's tables (migration 16), whose
// triggers on messages change kind with it.
func searchAt(st State) bool {
	for _, t := range st.Tables {
		if t.Name == migrations.SearchQueueTable {
			return t.Type != "missing"
		}
	}
	return false
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

package repository

import (
	"context"
	"fmt"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/migrate"
)

// MigrationsTable and MigrationLocksTable are where bun's migrator keeps its
// state; the names are remstore's so they never clash with the peer's tables.
const (
	MigrationsTable     = "remstore_migrations"
	MigrationLocksTable = "remstore_migration_locks"
)

// The DDL is the peer's, column for column (SPEC §2). CREATE ... IF NOT EXISTS
// makes the first migration a no-op on a database the peer already created,
// with or without its pgvector `embedding` column: no column is changed.
var pgTables = []string{
	`CREATE TABLE IF NOT EXISTS sessions (
		id UUID PRIMARY KEY,
		name VARCHAR(512),
		description TEXT,
		agent_name VARCHAR(256),
		status VARCHAR(64) DEFAULT 'active',
		graph_edges JSONB DEFAULT '[]'::jsonb,
		metadata JSONB DEFAULT '{}'::jsonb,
		tags TEXT[] DEFAULT '{}',
		user_id VARCHAR(256),
		tenant_id VARCHAR(256),
		created_at TIMESTAMPTZ DEFAULT NOW(),
		updated_at TIMESTAMPTZ DEFAULT NOW(),
		deleted_at TIMESTAMPTZ)`,
	`CREATE TABLE IF NOT EXISTS messages (
		id UUID PRIMARY KEY,
		session_id UUID REFERENCES sessions(id) ON DELETE CASCADE,
		role VARCHAR(64) NOT NULL,
		content TEXT NOT NULL,
		tool_calls JSONB DEFAULT '[]'::jsonb,
		graph_edges JSONB DEFAULT '[]'::jsonb,
		metadata JSONB DEFAULT '{}'::jsonb,
		tags TEXT[] DEFAULT '{}',
		trace_id VARCHAR(256),
		span_id VARCHAR(256),
		user_id VARCHAR(256),
		tenant_id VARCHAR(256),
		created_at TIMESTAMPTZ DEFAULT NOW(),
		updated_at TIMESTAMPTZ DEFAULT NOW(),
		deleted_at TIMESTAMPTZ)`,
}

// SQLite has no JSONB, TEXT[] or UUID: the same columns as TEXT, holding the
// JSON text, the PostgreSQL array literal and the UUID string.
var sqliteTables = []string{
	`CREATE TABLE IF NOT EXISTS sessions (
		id TEXT PRIMARY KEY,
		name VARCHAR(512),
		description TEXT,
		agent_name VARCHAR(256),
		status VARCHAR(64) DEFAULT 'active',
		graph_edges TEXT DEFAULT '[]',
		metadata TEXT DEFAULT '{}',
		tags TEXT DEFAULT '{}',
		user_id VARCHAR(256),
		tenant_id VARCHAR(256),
		created_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
		updated_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
		deleted_at TIMESTAMPTZ)`,
	`CREATE TABLE IF NOT EXISTS messages (
		id TEXT PRIMARY KEY,
		session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
		role VARCHAR(64) NOT NULL,
		content TEXT NOT NULL,
		tool_calls TEXT DEFAULT '[]',
		graph_edges TEXT DEFAULT '[]',
		metadata TEXT DEFAULT '{}',
		tags TEXT DEFAULT '{}',
		trace_id VARCHAR(256),
		span_id VARCHAR(256),
		user_id VARCHAR(256),
		tenant_id VARCHAR(256),
		created_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
		updated_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
		deleted_at TIMESTAMPTZ)`,
}

// Indexes only: never a constraint that could reject a row the peer writes.
// The entity-key index is on exactly the expression that lookups query
// (entityKeyExpr), or the planner would not use it.
func indexDDL(pg bool) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS remstore_messages_session_order ON messages (session_id, created_at, id)`,
		`CREATE INDEX IF NOT EXISTS remstore_messages_entity_key ON messages ((` + entityKeyExpr(pg) + `))`,
		`CREATE INDEX IF NOT EXISTS remstore_sessions_updated ON sessions (updated_at, id)`,
	}
}

var indexNames = []string{"remstore_messages_session_order", "remstore_messages_entity_key", "remstore_sessions_updated"}

// The store function's migration does nothing on SQLite, which has no
// round trips to save.

// entityKeyExpr is the SQL expression for metadata.entity_key.
func entityKeyExpr(pg bool) string {
	if pg {
		return "metadata->>'entity_key'"
	}
	return "json_extract(metadata, '$.entity_key')"
}

// Migrations returns remstore's versioned migrations, each with a down step.
func Migrations() *migrate.Migrations {
	ms := migrate.NewMigrations()
	add := func(name, comment string, up, down func(pg bool) []string) {
		run := func(stmts func(pg bool) []string) func(context.Context, *migrate.Migrator, *migrate.Migration) error {
			return func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
				db := m.DB()
				return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
					for _, s := range stmts(IsPostgres(db)) {
						if _, err := tx.ExecContext(ctx, s); err != nil {
							return fmt.Errorf("%s: %w", firstLine(strings.TrimSpace(s)), err)
						}
					}
					return nil
				})
			}
		}
		ms.Add(migrate.Migration{Name: name, Comment: comment, Up: run(up), Down: run(down)})
	}
	add("20260101000001", "peer_tables",
		func(pg bool) []string {
			if pg {
				return pgTables
			}
			return sqliteTables
		},
		// Down drops the tables and every message in them; it exists for
		// throwaway databases. On a peer's database, never roll back past 2.
		func(bool) []string {
			return []string{`DROP TABLE IF EXISTS messages`, `DROP TABLE IF EXISTS sessions`}
		})
	add("20260101000002", "indexes",
		indexDDL,
		func(bool) []string {
			var out []string
			for _, n := range indexNames {
				out = append(out, `DROP INDEX IF EXISTS `+n)
			}
			return out
		})
	add("20260101000003", "store_function",
		func(pg bool) []string {
			if pg {
				return []string{storeFunctionDDL}
			}
			return nil
		},
		func(pg bool) []string {
			if pg {
				return []string{`DROP FUNCTION IF EXISTS remstore_store_messages(uuid, bigint, text, text, text, timestamptz, jsonb)`}
			}
			return nil
		})
	add("20260101000004", "partial_indexes", partialIndexDDL,
		func(bool) []string {
			return []string{`DROP INDEX IF EXISTS remstore_messages_compaction`, `DROP INDEX IF EXISTS remstore_messages_unkeyed`}
		})
	return ms
}

// compactionPred and unkeyedPred select compaction summaries and rows without
// a stored key (the peer's). Queries must use exactly these predicates for
// the partial indexes below to serve them.
func compactionPred(pg bool) string {
	if pg {
		return "(metadata->>'compaction') = 'true'"
	}
	return "json_extract(metadata, '$.compaction') = 1"
}

func unkeyedPred(pg bool) string { return "(" + entityKeyExpr(pg) + ") IS NULL" }

// partialIndexDDL indexes the rare rows a streaming load must know about
// before it starts, so finding them is a probe, not a pass over every row's
// metadata; both are empty for a session only remstore wrote.
func partialIndexDDL(pg bool) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS remstore_messages_compaction ON messages (session_id, created_at, id) WHERE ` + compactionPred(pg),
		`CREATE INDEX IF NOT EXISTS remstore_messages_unkeyed ON messages (session_id) WHERE ` + unkeyedPred(pg),
	}
}

// storeFunctionDDL is the PostgreSQL fast path of a store: one statement,
// so one round trip and one (implicit) transaction. Inside a PL/pgSQL
// function each statement takes a new snapshot, so the position is read after
// the session's advisory lock is held, exactly as the transactional path does.
// It returns the session's status and the first index written; when the
// session is not active it writes nothing.
const storeFunctionDDL = `CREATE OR REPLACE FUNCTION remstore_store_messages(
	p_session uuid, p_lock bigint, p_name text, p_user text, p_tenant text, p_now timestamptz, p_rows jsonb)
RETURNS TABLE (status text, first_index bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
	v_status text;
	v_n bigint;
	v_last timestamptz;
	v_base timestamptz;
BEGIN
	PERFORM pg_advisory_xact_lock(p_lock);
	INSERT INTO sessions AS s (id, name, status, user_id, tenant_id, metadata, graph_edges, tags, created_at, updated_at)
	VALUES (p_session, p_name, 'active', p_user, p_tenant, '{}', '[]', '{}', p_now, p_now)
	ON CONFLICT (id) DO UPDATE SET updated_at = EXCLUDED.updated_at
	RETURNING s.status INTO v_status;
	IF v_status IS DISTINCT FROM 'active' THEN
		RETURN QUERY SELECT v_status, NULL::bigint;
		RETURN;
	END IF;
	SELECT count(*) FILTER (WHERE m.tenant_id = p_tenant), max(m.created_at) INTO v_n, v_last
	FROM messages m WHERE m.session_id = p_session;
	v_base := p_now;
	IF v_last IS NOT NULL AND v_base <= v_last THEN
		v_base := v_last + interval '1 microsecond';
	END IF;
	INSERT INTO messages (id, session_id, role, content, tool_calls, metadata, trace_id, span_id,
	                      user_id, tenant_id, created_at, updated_at)
	SELECT (r.v->>'id')::uuid, p_session, r.v->>'role', r.v->>'content', r.v->'tool_calls',
	       (r.v->'metadata') || jsonb_build_object('message_index', v_n + r.o - 1,
	                                               'entity_key', 'session-' || p_session || '-msg-' || (v_n + r.o - 1)),
	       r.v->>'trace_id', r.v->>'span_id', p_user, p_tenant,
	       v_base + (r.o - 1) * interval '1 microsecond', v_base + (r.o - 1) * interval '1 microsecond'
	FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS r(v, o);
	RETURN QUERY SELECT v_status, v_n;
END
$fn$`

// NewMigrator returns bun's migrator over remstore's migrations.
func NewMigrator(db *bun.DB) *migrate.Migrator {
	return migrate.NewMigrator(db, Migrations(),
		migrate.WithTableName(MigrationsTable),
		migrate.WithLocksTableName(MigrationLocksTable),
		migrate.WithMarkAppliedOnSuccess(true))
}

// Migrate applies every pending migration.
func Migrate(ctx context.Context, db *bun.DB) error {
	m := NewMigrator(db)
	if err := m.Init(ctx); err != nil {
		return fmt.Errorf("migrate: init: %w", err)
	}
	if err := m.Lock(ctx); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() { _ = m.Unlock(ctx) }()
	if _, err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

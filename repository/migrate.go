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
// (SQL.EntityKey), or the planner would not use it.
func indexDDL(pg bool) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS remstore_messages_session_order ON messages (session_id, created_at, id)`,
		`CREATE INDEX IF NOT EXISTS remstore_messages_entity_key ON messages ((` + SQLFor(pg).EntityKey + `))`,
		`CREATE INDEX IF NOT EXISTS remstore_sessions_updated ON sessions (updated_at, id)`,
	}
}

var indexNames = []string{"remstore_messages_session_order", "remstore_messages_entity_key", "remstore_sessions_updated"}

// The store function's migration does nothing on SQLite, which has no
// round trips to save.

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
	// 5 replaces the store function with StoreBatchFunction, which also
	// takes caller ids, checks the session's tenant and writes lifecycle
	// messages: every PostgreSQL store goes through it.
	add("20260101000005", "store_batch_function",
		func(pg bool) []string {
			if pg {
				return []string{`DROP FUNCTION IF EXISTS remstore_store_messages(uuid, bigint, text, text, text, timestamptz, jsonb)`, storeBatchDDL}
			}
			return nil
		},
		func(pg bool) []string {
			if pg {
				return []string{`DROP FUNCTION IF EXISTS ` + StoreBatchFunction + `(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean)`, storeFunctionDDL}
			}
			return nil
		})
	// 6 is the tenant guard (tenant_guard.go), on PostgreSQL tables that are
	// not distributed.
	ms.Add(migrate.Migration{Name: "20260101000006", Comment: "tenant_guard",
		Up: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			db := m.DB()
			if !IsPostgres(db) {
				return nil
			}
			if distributed, err := messagesDistributed(ctx, db); err != nil || distributed {
				return err
			}
			return execAll(ctx, db, tenantGuardDDL)
		},
		Down: func(ctx context.Context, m *migrate.Migrator, _ *migrate.Migration) error {
			if !IsPostgres(m.DB()) {
				return nil
			}
			// Distributed tables never had it (and refuse DROP TRIGGER).
			if distributed, err := messagesDistributed(ctx, m.DB()); err != nil || distributed {
				return err
			}
			return execAll(ctx, m.DB(), dropTenantGuardDDL())
		}})
	return ms
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

// execAll runs stmts in one transaction.
func execAll(ctx context.Context, db *bun.DB, stmts []string) error {
	return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		for _, s := range stmts {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", firstLine(strings.TrimSpace(s)), err)
			}
		}
		return nil
	})
}

// partialIndexDDL indexes the rare rows a streaming load must know about
// before it starts, so finding them is a probe, not a pass over every row's
// metadata; both are empty for a session only remstore wrote.
func partialIndexDDL(pg bool) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS remstore_messages_compaction ON messages (session_id, created_at, id) WHERE ` + SQLFor(pg).Compaction,
		`CREATE INDEX IF NOT EXISTS remstore_messages_unkeyed ON messages (session_id) WHERE ` + SQLFor(pg).Unkeyed,
	}
}

// storeFunctionDDL is migration 3's store function, kept so that rolling
// back migration 5 restores it. The PostgreSQL fast path of a store: one statement,
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

// StoreBatchFunction is the PostgreSQL write of a store call (see
// storeBatchDDL); the session store calls it with one statement.
const StoreBatchFunction = "remstore_store_batch"

// storeBatchDDL writes one store call in one statement, so one round trip and
// one (implicit) transaction, or inside the caller's transaction. Inside a
// PL/pgSQL function each statement takes a new snapshot, so the position is
// read after the session's advisory lock is held.
//
// It returns one row: status is the session's status, or 'not_found' when the
// session belongs to another tenant, or 'id_taken' when a caller id is used
// by a message of another session or tenant (nothing is written then);
// first_index is the index of the first message written; existing lists the
// rows whose caller id this session already holds ({o, key}: a retry, not
// written again). p_rows is a JSON array of {id, role, content, tool_calls,
// metadata, trace_id, span_id}; p_check says whether any id came from the
// caller; p_allow_inactive lets lifecycle messages into a closed session.
const storeBatchDDL = `CREATE OR REPLACE FUNCTION ` + StoreBatchFunction + `(
	p_session uuid, p_lock bigint, p_name text, p_user text, p_tenant text, p_now timestamptz, p_rows jsonb,
	p_check boolean, p_allow_inactive boolean)
RETURNS TABLE (status text, first_index bigint, existing jsonb)
LANGUAGE plpgsql AS $fn$
DECLARE
	v_tenant text;
	v_status text;
	v_existing jsonb;
	v_n bigint;
	v_last timestamptz;
	v_base timestamptz;
BEGIN
	PERFORM pg_advisory_xact_lock(p_lock);
	-- Caller ids first: a refused call changes nothing, not even the session.
	IF p_check THEN
		SELECT jsonb_agg(jsonb_build_object('o', r.o, 'key', m.metadata->>'entity_key',
			'mine', m.session_id = p_session AND m.tenant_id IS NOT DISTINCT FROM p_tenant) ORDER BY r.o)
		INTO v_existing
		FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS r(v, o)
		JOIN messages m ON m.id = (r.v->>'id')::uuid;
		IF EXISTS (SELECT 1 FROM jsonb_array_elements(v_existing) e WHERE NOT (e->>'mine')::boolean) THEN
			RETURN QUERY SELECT 'id_taken'::text, NULL::bigint, v_existing;
			RETURN;
		END IF;
	END IF;
	-- The common path is this one statement: create the session, or touch
	-- (and undelete) it when it is the tenant's and open to this write.
	INSERT INTO sessions AS s (id, name, status, user_id, tenant_id, metadata, graph_edges, tags, created_at, updated_at)
	VALUES (p_session, p_name, 'active', p_user, p_tenant, '{}', '[]', '{}', p_now, p_now)
	ON CONFLICT (id) DO UPDATE SET updated_at = GREATEST(s.updated_at, EXCLUDED.updated_at), deleted_at = NULL
		WHERE s.tenant_id = EXCLUDED.tenant_id AND (COALESCE(s.status, 'active') = 'active' OR p_allow_inactive)
	RETURNING COALESCE(s.status, 'active') INTO v_status;
	IF NOT FOUND THEN -- why not: another tenant's session, or one not open to this write
		SELECT s.tenant_id, COALESCE(s.status, 'active') INTO v_tenant, v_status FROM sessions s WHERE s.id = p_session;
		IF v_tenant IS DISTINCT FROM p_tenant THEN
			v_status := 'not_found';
		END IF;
		RETURN QUERY SELECT v_status, NULL::bigint, NULL::jsonb;
		RETURN;
	END IF;
	SELECT count(*) FILTER (WHERE m.tenant_id = p_tenant), max(m.created_at) INTO v_n, v_last
	FROM messages m WHERE m.session_id = p_session;
	v_base := p_now;
	IF v_last IS NOT NULL AND v_base <= v_last THEN
		v_base := v_last + interval '1 microsecond';
	END IF;
	INSERT INTO messages (id, session_id, role, content, tool_calls, graph_edges, metadata, tags, trace_id, span_id,
	                      user_id, tenant_id, created_at, updated_at)
	SELECT (r.v->>'id')::uuid, p_session, r.v->>'role', r.v->>'content', r.v->'tool_calls', '[]',
	       (r.v->'metadata') || jsonb_build_object('message_index', v_n + r.k - 1,
	                                               'entity_key', 'session-' || p_session || '-msg-' || (v_n + r.k - 1)),
	       '{}', r.v->>'trace_id', r.v->>'span_id', p_user, p_tenant,
	       v_base + (r.k - 1) * interval '1 microsecond', v_base + (r.k - 1) * interval '1 microsecond'
	FROM (SELECT x.v, row_number() OVER (ORDER BY x.o) AS k
	      FROM jsonb_array_elements(p_rows) WITH ORDINALITY AS x(v, o)
	      WHERE v_existing IS NULL
	         OR NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v_existing) e WHERE (e->>'o')::bigint = x.o)) r;
	RETURN QUERY SELECT v_status, v_n, v_existing;
END
$fn$`

// MigrationState is one migration and whether the database has it.
type MigrationState struct {
	Name    string `json:"name"`
	Comment string `json:"comment"`
	Applied bool   `json:"applied"`
}

// MigrationStatus lists remstore's migrations and which are applied, without
// creating anything: on a database remstore never migrated, all are pending.
func MigrationStatus(ctx context.Context, db *bun.DB) ([]MigrationState, error) {
	applied := map[string]bool{}
	if ok, err := tableExists(ctx, db, MigrationsTable); err != nil {
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
	var out []MigrationState
	for _, m := range Migrations().Sorted() {
		out = append(out, MigrationState{Name: m.Name, Comment: m.Comment, Applied: applied[m.Name]})
	}
	return out, nil
}

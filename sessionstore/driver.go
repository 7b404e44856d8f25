package sessionstore

import (
	"context"
	"database/sql"
	"strconv"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// driver is the seam between the store's rules and one database: only what
// must differ lives behind it. The rules (validation, tenancy, keys, order,
// compaction, lookup) are in the store and call these.
type driver interface {
	// write executes one store call as the plan says, all or nothing: the
	// session row created or checked, caller ids checked, positions and
	// timestamps assigned, the rows inserted.
	write(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error)
	// eachRow hands the tenant's rows of a session to fn in load order
	// (created_at, id), soft-deleted ones included, from position offset,
	// at most limit of them, without holding them.
	eachRow(ctx context.Context, db bun.IDB, q rowsArgs, fn func(storedRow) error) error
	// queryRow runs a one-row read written with ? placeholders; sql.ErrNoRows
	// when there is none.
	queryRow(ctx context.Context, db bun.IDB, query string, args []any, dest ...any) error
	// lock takes the session's write lock for the rest of tx.
	lock(ctx context.Context, tx bun.IDB, sid uuid.UUID) error
}

// drivers are the databases the store runs on, by bun dialect name. The
// shared test suite runs on each; a test fails when one is missing from it.
var drivers = map[dialect.Name]driver{
	dialect.PG:     pgDriver{},
	dialect.SQLite: sqliteDriver{},
}

func driverFor(db bun.IDB) driver {
	if d, ok := drivers[db.Dialect().Name()]; ok {
		return d
	}
	return sqliteDriver{} // plain SQL through bun: the portable default
}

// rowsArgs selects rows for eachRow.
type rowsArgs struct {
	sid    uuid.UUID
	tenant string
	offset int
	limit  int64
}

// noLimit is "all rows" for rowsQuery's LIMIT.
const noLimit = int64(1) << 62

// rowsQuery reads only the fields history assembly needs; -> and ->> mean the
// same on PostgreSQL and SQLite, so one text serves both.
const rowsQuery = `SELECT id, role, content, metadata->>'entity_key', metadata->>'tool_call_id', metadata->>'tool_name',
	metadata->'tool_arguments', metadata->>'author', metadata->'usage', metadata->'compaction', metadata->'compacts_before',
	tool_calls->'items', created_at, deleted_at
	FROM messages WHERE session_id = ? AND tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`

// eachRowSQL is eachRow through database/sql, for any dialect and for a
// store running inside a transaction.
func eachRowSQL(ctx context.Context, db bun.IDB, q rowsArgs, fn func(storedRow) error) error {
	rs, err := db.QueryContext(ctx, rowsQuery, q.sid, q.tenant, q.limit, q.offset)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var r storedRow
		var key, callID, name, author, compaction, before sql.NullString
		var args, usage, calls []byte
		var created, deleted dbTime
		if err := rs.Scan(&r.ID, &r.Role, &r.Content, &key, &callID, &name, &args, &author, &usage, &compaction, &before,
			&calls, &created, &deleted); err != nil {
			return err
		}
		r.Key, r.ToolCallID, r.ToolName, r.Author = key.String, callID.String, name.String, author.String
		r.ToolArgs, r.Usage, r.ToolCalls = compactRaw(args), compactRaw(usage), compactRaw(calls)
		r.Compaction = compaction.String == "true"
		r.CompactsBefore, _ = strconv.Atoi(before.String)
		r.CreatedAt, r.Deleted = created.Time, deleted.Valid
		if err := fn(r); err != nil {
			return err
		}
	}
	return rs.Err()
}

// queryRowSQL is queryRow through bun.
func queryRowSQL(ctx context.Context, db bun.IDB, query string, args []any, dest ...any) error {
	rs, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	return scanOne(rs, dest...)
}

// scanOne scans the first row of rs into dest and closes it.
func scanOne(rs *sql.Rows, dest ...any) error {
	defer rs.Close()
	if !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		return sql.ErrNoRows
	}
	if err := rs.Scan(dest...); err != nil {
		return err
	}
	return rs.Close()
}

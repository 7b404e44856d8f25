package sessionstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// pgDriver writes a store call in one statement (the store function,
// repository/migrations/sql/functions/store_batch_v3.sql:
// one round trip, all or nothing, also inside a caller's transaction) and
// reads through pgx natively when the store runs on a pool: $n parameters
// and pgx's statement cache let the server parse and plan the hot reads once
// per connection, and binary results skip database/sql's conversions, which
// cost most of a large load. Inside a transaction it reads through bun.
type pgDriver struct{}

// pgRow is one message as the store function reads it.
type pgRow struct {
	ID        uuid.UUID       `json:"id"`
	Role      models.Role     `json:"role"`
	Content   string          `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
	Metadata  models.JSONMap  `json:"metadata"`
	TraceID   *string         `json:"trace_id,omitempty"`
	SpanID    *string         `json:"span_id,omitempty"`
}

func (pgDriver) write(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error) {
	if c, ok := db.(conn); ok && c.pool != nil && c.turns != nil {
		return c.turns.write(ctx, s, c, p)
	}
	return writeFunction(ctx, s, db, p)
}

// storeCall is the store function's call for p: its text and arguments.
func storeCall(s *Store, p *writePlan) (string, []any, error) {
	rows := make([]pgRow, len(p.rows))
	for i, r := range p.rows {
		rows[i] = pgRow{ID: r.ID, Role: r.Role, Content: r.Content, ToolCalls: json.RawMessage(r.ToolCalls),
			Metadata: r.Metadata, TraceID: r.TraceID, SpanID: r.SpanID}
	}
	payload, err := json.Marshal(rows)
	if err != nil {
		return "", nil, err
	}
	return "SELECT status, first_index, existing, keys FROM " + migrations.StoreFunction + "(?, ?, ?, ?, ?, ?, ?, ?, ?)",
		[]any{p.sid, lockKey(p.sid), p.name, p.userID, s.userID, p.now, string(payload), p.check, p.allowInactive}, nil
}

// writeFunction is one store call, one statement.
func writeFunction(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error) {
	q, args, err := storeCall(s, p)
	if err != nil {
		return writeOutcome{}, err
	}
	return scanOutcome(db.QueryRowContext(ctx, q, args...))
}

// scanOutcome reads the store function's one row.
func scanOutcome(row interface{ Scan(...any) error }) (writeOutcome, error) {
	var out writeOutcome
	var first sql.NullInt64
	var existing []byte
	keys := pgdialect.Array(&out.keys)
	if err := row.Scan(&out.status, &first, &existing, keys); err != nil {
		return out, err
	}
	out.first = int(first.Int64)
	if len(existing) > 0 {
		if err := json.Unmarshal(existing, &out.existing); err != nil {
			return out, fmt.Errorf("read existing ids: %w", err)
		}
	}
	return out, nil
}

func (pgDriver) eachRow(ctx context.Context, c conn, q rowsArgs, fn func(storedRow) error) error {
	if c.pool == nil { // in a transaction
		return eachRowSQL(ctx, c, q, fn)
	}
	// The rows query runs on a generic plan, prepared once per connection:
	// PostgreSQL would otherwise plan it again on every call wherever
	// sessions differ much in size (its custom plans look cheaper there),
	// and planning it cost more than running it for a small session. Only
	// this statement is forced: its one plan is a range of the
	// (session_id, created_at, id) index whatever the parameters, which
	// TestLoadPlanIsGeneric checks on a skewed table. The settings, the rows
	// and the RESETs go in one pipeline, one round trip; an error aborts the
	// pipeline's implicit transaction, and the SET with it (settings are
	// transactional).
	if !c.generic {
		rs, err := c.pool.Query(ctx, rowsQueryPG, append([]any{c.mode}, q.args()...)...)
		if err != nil {
			return err
		}
		defer rs.Close()
		return scanRows(rs, fn)
	}
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	pc := conn.Conn()
	sd, err := pc.Prepare(ctx, rowsStatement, rowsQueryPG)
	if err != nil {
		return err
	}
	var eqb pgx.ExtendedQueryBuilder
	if err := eqb.Build(pc.TypeMap(), sd, q.args()); err != nil {
		return err
	}
	pl := pc.PgConn().StartPipeline(ctx)
	defer pl.Close()
	pl.SendQueryParams(setGenericPlan, nil, nil, nil, nil)
	pl.SendQueryStatement(sd, eqb.ParamValues, eqb.ParamFormats, eqb.ResultFormats)
	pl.SendQueryParams(resetPlanMode, nil, nil, nil, nil)
	pl.SendQueryParams(resetJIT, nil, nil, nil, nil)
	if err := pl.Sync(); err != nil {
		return err
	}
	next := func() (*pgconn.ResultReader, error) {
		res, err := pl.GetResults()
		if err != nil {
			return nil, err
		}
		rr, ok := res.(*pgconn.ResultReader)
		if !ok {
			return nil, fmt.Errorf("load pipeline: unexpected %T", res)
		}
		return rr, nil
	}
	set, err := next()
	if err != nil {
		return err
	}
	if _, err := set.Close(); err != nil {
		return err
	}
	rr, err := next()
	if err != nil {
		return err
	}
	rs := pgx.RowsFromResultReader(pc.TypeMap(), rr)
	defer rs.Close()
	if err := scanRows(rs, fn); err != nil {
		return err
	}
	rs.Close()
	for range 2 { // the RESETs
		reset, err := next()
		if err != nil {
			return err
		}
		if _, err := reset.Close(); err != nil {
			return err
		}
	}
	return pl.Close()
}

// scanRows hands the rows of rowsQuery to fn.
func scanRows(rs pgx.Rows, fn func(storedRow) error) error {
	for rs.Next() {
		var r storedRow
		var id [16]byte
		var role string
		var tail, key, callID, name, author, compaction, before *string
		var args, usage, calls, src, agents []byte
		var deleted *time.Time
		var length int32
		if err := rs.Scan(&id, &role, &r.Content, &tail, &length, &r.Plain, &key, &callID, &name, &args, &author, &usage, &compaction, &before,
			&calls, &src, &agents, &r.CreatedAt, &deleted); err != nil {
			return err
		}
		r.Tail, r.Length = deref(tail), int(length)
		r.ID, r.Role = uuid.UUID(id), models.Role(role)
		r.Key, r.ToolCallID, r.ToolName, r.Author = deref(key), deref(callID), deref(name), deref(author)
		r.ToolArgs, r.Usage, r.ToolCalls = compactRaw(args), compactRaw(usage), compactRaw(calls)
		r.Source, r.AgentsItem = compactRaw(src), compactRaw(agents)
		r.Compaction = deref(compaction) == "true"
		r.CompactsBefore, _ = strconv.Atoi(deref(before))
		r.CreatedAt, r.Deleted = r.CreatedAt.UTC(), deleted != nil
		if err := fn(r); err != nil {
			return err
		}
	}
	return rs.Err()
}

const (
	rowsStatement = "remstore_rows" // the rows query's prepared statement on each connection
	// A generic plan's cost is estimated for the average session, which on
	// a table holding a million-row session is high enough for JIT
	// compilation (jit_above_cost): 13.5 ms on every call, JIT's code being
	// compiled per execution. The load's few expressions never repay it.
	setGenericPlan = "SELECT set_config('plan_cache_mode', 'force_generic_plan', false), set_config('jit', 'off', false)"
	// Two RESETs: reading the reset values from pg_settings instead costs
	// more than the load (the view computes every setting).
	resetPlanMode = "RESET plan_cache_mode"
	resetJIT      = "RESET jit"
)

// numberedTexts caches repository.Numbered of the few query texts the store
// uses, so a hot read does not rewrite its text on every call.
var numberedTexts sync.Map

func numbered(q string) string {
	if v, ok := numberedTexts.Load(q); ok {
		return v.(string)
	}
	n := repository.Numbered(q)
	numberedTexts.Store(q, n)
	return n
}

func (pgDriver) queryRow(ctx context.Context, c conn, query string, args []any, dest ...any) error {
	if c.pool == nil { // in a transaction
		return queryRowSQL(ctx, c, query, args, dest...)
	}
	// pgx.ErrNoRows is an sql.ErrNoRows.
	return c.pool.QueryRow(ctx, numbered(query), append([]any{c.mode}, args...)...).Scan(dest...)
}

func (pgDriver) lock(ctx context.Context, tx bun.IDB, sid uuid.UUID) error {
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(sid))
	return err
}

// lockKey is the advisory-lock key of a session.
func lockKey(sid uuid.UUID) int64 {
	return int64(binary.BigEndian.Uint64(sid[:8]) ^ binary.BigEndian.Uint64(sid[8:]))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

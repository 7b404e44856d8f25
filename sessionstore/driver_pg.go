package sessionstore

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// pgDriver writes a store call in one statement (the store function,
// repository/migrations/sql/functions/store_batch_v8.sql:
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

// storeParams are the store function's arguments, named in SQL as in Go:
// a swapped pair (user and tenant, two booleans) cannot run.
type storeParams struct {
	Session       uuid.UUID `sql:"session"`
	Lock          int64     `sql:"lock"`
	Name          string    `sql:"name"`
	User          string    `sql:"user"`
	Tenant        string    `sql:"tenant"`
	Now           time.Time `sql:"now"`
	Rows          string    `sql:"rows"`
	Check         bool      `sql:"check"`
	AllowInactive bool      `sql:"allow_inactive"`
	Expect        *string   `sql:"expect"`
	MaxMessages   int       `sql:"max_messages"`
	MaxSessions   int       `sql:"max_sessions"`
}

// storeStatement calls the store function in PostgreSQL's named notation.
var storeStatement = repository.NewNamed[storeParams]("SELECT status, first_index, existing, keys, last FROM " + migrations.StoreFunction +
	`(p_session => @session, p_lock => @lock, p_name => @name, p_user => @user, p_tenant => @tenant, p_now => @now,
	p_rows => @rows, p_check => @check, p_allow_inactive => @allow_inactive, p_expect => @expect,
	p_max_messages => @max_messages, p_max_sessions => @max_sessions)`)

// storeCall is the store function's arguments for p.
func storeCall(s *Store, p *writePlan) (*storeParams, error) {
	rows := make([]pgRow, len(p.rows))
	for i, r := range p.rows {
		rows[i] = pgRow{ID: r.ID, Role: r.Role, Content: r.Content, ToolCalls: json.RawMessage(r.ToolCalls),
			Metadata: r.Metadata, TraceID: r.TraceID, SpanID: r.SpanID}
	}
	payload, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	var expect *string
	if p.expect != "" {
		expect = &p.expect
	}
	return &storeParams{Session: p.sid, Lock: lockKey(p.sid), Name: p.name, User: p.userID, Tenant: s.userID, Now: p.now,
		Rows: string(payload), Check: p.check, AllowInactive: p.allowInactive, Expect: expect,
		MaxMessages: p.limits.SessionMessages, MaxSessions: p.limits.Sessions}, nil
}

// writeFunction is one store call, one statement: on the pool a statement
// pgx prepares once per connection (the rows travel as a parameter, not as
// a literal the server must lex, nor one bun must quote), in a transaction
// through it.
func writeFunction(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error) {
	args, err := storeCall(s, p)
	if err != nil {
		return writeOutcome{}, err
	}
	if c, ok := db.(conn); ok && c.pool != nil {
		return scanOutcome(c.pool.QueryRow(ctx, storeStatement.PG(), pgxArgs(c.mode, storeStatement.PGArgs(args))...), c.mode)
	}
	return scanOutcome(db.QueryRowContext(ctx, storeStatement.Bun(), storeStatement.BunArgs(args)...), pgx.QueryExecModeSimpleProtocol)
}

// scanOutcome reads the store function's one row, sent in mode: pgx scans
// the keys itself where they come in binary, bun's parser their text.
func scanOutcome(row interface{ Scan(...any) error }, mode pgx.QueryExecMode) (writeOutcome, error) {
	var out writeOutcome
	var first sql.NullInt64
	var existing []byte
	var last sql.NullString
	var keys any = &out.keys
	if !described(mode) {
		keys = pgdialect.Array(&out.keys)
	}
	if err := row.Scan(&out.status, &first, &existing, keys, &last); err != nil {
		return out, err
	}
	out.first, out.last = int(first.Int64), last.String
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
	// The rows query runs on a generic plan, prepared once per connection
	// of the load pool (repository.DB.LoadPool), whose sessions force
	// generic plans: PostgreSQL would otherwise plan it again on every call
	// wherever sessions differ much in size (its custom plans look cheaper
	// there), and planning it cost more than running it for a small
	// session. Only this statement runs there: its one plan is a range of
	// the (session_id, created_at, id) index whatever the parameters, which
	// TestLoadPlanIsGeneric checks on a skewed table. Without that pool
	// (Citus, a transaction-mode pooler) it is planned per call.
	pool, mode := c.loads, pgx.QueryExecModeCacheStatement
	if pool == nil {
		pool, mode = c.pool, c.mode
	}
	st := rowsTexts.pg[q.window()]
	rs, err := pool.Query(ctx, st.PG(), pgxArgs(mode, st.PGArgs(q.params()))...)
	if err != nil {
		return err
	}
	defer rs.Close()
	return scanRows(rs, fn)
}

// scanRows hands the rows of rowsQuery to fn, each column read from the
// bytes pgx received (rawRow).
func scanRows(rs pgx.Rows, fn func(storedRow) error) error {
	raw := rowsOf(rs)
	for rs.Next() {
		raw.vals = rs.RawValues()
		if len(raw.vals) != 25 {
			return fmt.Errorf("load: %d columns, want 25", len(raw.vals))
		}
		var r storedRow
		id, _ := raw.uuid(0)
		r.ID, r.Role = uuid.UUID(id), raw.role(1)
		r.Content, r.Tail, r.Length = raw.text(2), raw.text(3), raw.int(4)
		r.Plain = raw.bool(5)
		if last, ok := raw.uuid(6); ok {
			r.Last = last
		}
		r.Key, r.ToolCallID, r.ToolName, r.ToolArgs = raw.text(7), raw.text(8), raw.text(9), raw.json(10)
		r.Author, r.Usage, r.Compaction = raw.text(11), raw.json(12), raw.text(13) == "true"
		r.CompactsBefore = coversBefore(raw.text(14))
		r.ToolCalls, r.Source, r.AgentsItem = raw.json(15), raw.json(16), raw.json(17)
		r.Model, r.Reasoning, r.TraceID, r.SpanID = raw.text(18), raw.json(19), raw.text(20), raw.text(21)
		var ok bool
		r.CreatedAt, ok = raw.time(22)
		_, r.Deleted = raw.time(23)
		if summary, ok := raw.uuid(24); ok {
			r.Summary = summary
		}
		if raw.err != nil {
			return raw.err
		}
		if !ok {
			return fmt.Errorf("load: message %s has no created_at", r.ID)
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rs.Err()
}

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
	return c.pool.QueryRow(ctx, numbered(query), pgxArgs(c.mode, args)...).Scan(dest...)
}

// described says pgx describes a statement sent in mode before it binds it
// (parameter and result types known: binary values).
func described(mode pgx.QueryExecMode) bool {
	switch mode {
	case pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeDescribeExec:
		return true
	}
	return false
}

// pgxArgs is a statement's arguments as pgx takes them: the exec mode
// first, then args, each uuid as [16]byte where mode describes the
// statement first (so pgx knows the parameter is a uuid). As a
// driver.Valuer a uuid.UUID is written as text, refused by pgx's binary
// encoder (an error value formatted on the way), parsed back and encoded
// again: a tenth of a small load's CPU. The text protocols take it as text.
// The caller's slice is left as it was.
func pgxArgs(mode pgx.QueryExecMode, args []any) []any {
	out := make([]any, 0, len(args)+1)
	out = append(out, mode)
	binary := described(mode)
	for _, a := range args {
		if u, ok := a.(uuid.UUID); ok && binary {
			a = [16]byte(u)
		}
		out = append(out, a)
	}
	return out
}

func (pgDriver) lock(ctx context.Context, tx bun.IDB, sid uuid.UUID) error {
	// The advisory lock, and the session's row, where it lives: on Citus
	// the store function takes its advisory lock on the session's worker,
	// not here, and its first row lock is this row's (its upsert, or with
	// a limit set its check), so a delete, pop or clear locking it first
	// waits for a store instead of deadlocking with it.
	if _, err := lockSession(ctx, BunTx(tx), sid); err != nil {
		return err
	}
	// What runs under the lock (a pop, a clear, a delete) reads one end of
	// the session's (session_id, created_at, id) index. A big session the
	// planner thinks small (a session's rows are estimated from the
	// table's average, or from statistics older than the fill) got a
	// bitmap scan of every row and a sort for the last one: 200 ms a pop
	// at 100,000 messages. Without sorts the index's order is the plan.
	_, err := tx.ExecContext(ctx, "SET LOCAL enable_sort = off; SET LOCAL jit = off")
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

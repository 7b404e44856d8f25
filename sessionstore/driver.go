package sessionstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/repository"
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
	eachRow(ctx context.Context, c conn, q rowsArgs, fn func(storedRow) error) error
	// queryRow runs a one-row read written with ? placeholders; sql.ErrNoRows
	// when there is none.
	queryRow(ctx context.Context, c conn, query string, args []any, dest ...any) error
	// lock takes the session's write lock for the rest of tx.
	lock(ctx context.Context, tx bun.IDB, sid uuid.UUID) error
}

// driverFor returns the driver of PostgreSQL (pg) or SQLite.
func driverFor(pg bool) driver {
	if pg {
		return pgDriver{}
	}
	return sqliteDriver{}
}

// rowsArgs selects rows for eachRow.
type rowsArgs struct {
	sid    uuid.UUID
	tenant string
	offset int
	limit  int64
	// cut > 0 has the database cut live assistant answers longer than 2*cut
	// code points to their first and last cut code points (storedRow.Tail,
	// storedRow.Length): the middle, which a compressed load drops anyway,
	// never leaves the server. 0 reads every content in full.
	cut int
	// whole > 0 leaves answers of at most whole bytes uncut (Length -1): the
	// compressor cuts them in Go, by the same rule (TestServerCutEqualsClientCut
	// runs both). Cutting on the server pays for itself only on long texts:
	// counting, heading and tailing 250 answers of 588 characters took
	// 1.0 ms of a 1,000-message load's 1.4 ms on the server (issue 45).
	whole int
	// plain reads only what a load without extras shows (toHistory): a
	// row's tool fields only on a tool row, and not the author, usage,
	// tool_calls or compaction fields. Each field is a lookup in the row's
	// metadata on the server, and nine of them were half of a load's server
	// time. Compaction and usage read every field.
	plain bool
	// sources reads metadata.pydantic_ai and the tool_calls items even when
	// plain (LoadOptions.Sources): what convert rebuilds a call from.
	sources bool
	// unplanned makes a load one statement: the query itself checks that the
	// session needs no plan (loadPlan: no row without a stored key, no live
	// compaction summary unless ignoreCompaction) and says so in every
	// row's storedRow.Plain; where it does need one, it returns one row.
	unplanned, ignoreCompaction bool
	// lastN > 0 reads from the lastN-th live row from the end (all rows
	// when there are fewer): an index range from there, whatever the
	// session's length (LoadOptions.LastN).
	lastN int
	// since, when set, reads the rows created after it and the session's
	// last row (which carries the plan check and the last live row when
	// none is newer): an index range from there (LoadOptions.Since). The
	// caller still leaves out the rows not after it.
	since time.Time
	// from, when set, reads from the row of that id on, in load order: an
	// index range from it, whatever the rows before it (a compacted load
	// of a session only remstore wrote: its summary, its first kept row).
	from uuid.UUID
	// fromSummary has a load from the start (windowAll, unplanned, not
	// ignoring compaction) of a compacted session only remstore wrote read
	// from the row its last summary leaves shown first, the summary's id in
	// every row (storedRow.Summary): one statement, whatever the rows the
	// summary covers.
	fromSummary bool
	// last reads the session's last live row into every row
	// (storedRow.Last, for LoadOptions.OnLast); without it the statement
	// skips that probe and storedRow.Last is uuid.Nil.
	last bool
	// summaries reads metadata.compaction even when plain: a load of a
	// compacted session leaves out every summary but its last (stream).
	// A load from its summary (fromSummary) reads it without being asked.
	summaries bool
}

// The windows a rows query reads (rowsTexts' index): every row, from the
// lastN-th live row from the end, from since, or from a row.
const (
	windowAll = iota
	windowLast
	windowSince
	windowFrom
	windows
)

// rowsParams are rowsQuery's parameters, by name (repository.Named).
type rowsParams struct {
	Sid              uuid.UUID `sql:"sid"`
	Tenant           string    `sql:"tenant"`
	Cut              int       `sql:"cut"`
	Long             int       `sql:"long"`    // 2*cut: longer live answers are cut; -1: none is
	Whole            int       `sql:"whole"`   // max(long, rowsArgs.whole): answers of up to this many bytes come whole
	Planned          bool      `sql:"planned"` // no check: every row is as the caller planned
	IgnoreCompaction bool      `sql:"ignore_compaction"`
	All              bool      `sql:"all"`                 // every field, not only what a plain load shows
	AllOrSources     bool      `sql:"all_or_sources"`      // the fields convert rebuilds a call from
	Nth              int       `sql:"nth,optional"`        // lastN-1, in windowLast's text
	SinceNext        time.Time `sql:"since_next,optional"` // the first instant after since, in windowSince's text
	From             uuid.UUID `sql:"from,optional"`       // rowsArgs.from, in windowFrom's text
	Prefix           string    `sql:"prefix,optional"`     // the stored keys of the session's rows, in windowAll's text (rowsArgs.fromSummary)
	Limit            int64     `sql:"limit"`
	Offset           int       `sql:"offset"`
	Last             bool      `sql:"want_last"` // rowsArgs.last
	Summaries        bool      `sql:"summaries"` // rowsArgs.summaries
}

// params are the query's parameters.
func (q rowsArgs) params() *rowsParams {
	long := 2 * q.cut
	if q.cut <= 0 {
		long = -1 // nothing is cut: no length is computed
	}
	p := &rowsParams{Sid: q.sid, Tenant: q.tenant, Cut: q.cut, Long: long, Whole: max(long, q.whole), Planned: !q.unplanned,
		IgnoreCompaction: q.ignoreCompaction, All: !q.plain, AllOrSources: !q.plain || q.sources,
		Nth: q.lastN - 1, SinceNext: q.since.Truncate(time.Microsecond).Add(time.Microsecond), From: q.from, Limit: q.limit, Offset: q.offset,
		Prefix: noKeyPrefix, Last: q.last, Summaries: q.summaries}
	if q.fromSummary && q.unplanned && !q.ignoreCompaction {
		p.Prefix = keyPrefix(q.sid)
	}
	return p
}

// noKeyPrefix starts no stored key: a rows query's @prefix that finds no kept
// row, so the range starts at the session's first row.
const noKeyPrefix = "no key starts so: "

// cutWholeBytes is rowsArgs.whole of a store's loads.
const cutWholeBytes = 8 << 10

// noLimit is "all rows" for rowsQuery's LIMIT.
const noLimit = int64(1) << 62

// rowsQuery reads only the fields history assembly needs, a long answer cut
// (see rowsArgs.cut); -> and ->> mean the same on PostgreSQL and SQLite, so
// the texts differ only in the cut's functions (repository.SQL). n, the
// length in code points, is counted only for a live answer with more bytes
// than the limit: counting it for every row was a fifth of a load's time on
// the server.
//
// The plain column (and the LIMIT) carry a load's plan check
// (rowsArgs.unplanned): the two probes of loadPlan's partial indexes, which
// PostgreSQL runs once per statement, so that the common load is one
// statement and one round trip.
func rowsQuery(d repository.SQL, w int) string {
	plain := `(@planned OR (NOT EXISTS (SELECT 1 FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Unkeyed + `)
		AND (@ignore_compaction OR NOT EXISTS (SELECT 1 FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Compaction + ` AND deleted_at IS NULL))))`
	// The last live row, read once per statement, in the statement's own
	// snapshot: a guarded store names it (LoadOptions.OnLast). Only where
	// asked: both databases evaluate the subquery when its branch is
	// reached, and a load without OnLast (most) skips the probe.
	last := `CASE WHEN @want_last THEN (SELECT id FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1) END`
	// A row without a created_at (only a hand-written INSERT makes one)
	// is in no load: no row comparison holds for it. first and nth skip
	// it too, or SQLite (NULL sorts first) bounded the range by NULL and
	// loaded nothing, and PostgreSQL (NULL sorts first in DESC) counted it
	// in the last N.
	first := `FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND created_at IS NOT NULL ORDER BY created_at, id LIMIT 1`
	window, with, summary := "", "", "NULL"
	switch w {
	case windowAll:
		// A load from the start of a compacted session only remstore
		// wrote starts at the row its last live summary leaves shown first
		// (found by its stored key, @prefix || compacts_before; every read
		// names the session, as Citus routes by it): an index
		// range from there, whatever the rows the summary covers, the
		// summary's id in every row (the caller hands it out first). b holds
		// them, computed once; without a summary, or with a @prefix no key
		// starts with (a planned read, a load ignoring compaction or by
		// position), the range starts at the session's first row and summary
		// is NULL. A summary whose kept row is not found needs the plan.
		byKey, minAt, minID := " INDEXED BY remstore_messages_entity_key", "(SELECT created_at "+first+")", "''"
		if d.Postgres {
			byKey, minAt, minID = "", "'-infinity'::timestamptz", "'00000000-0000-0000-0000-000000000000'::uuid"
		}
		kept := `FROM messages` + byKey + ` WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.EntityKey + ` = @prefix || s.cb LIMIT 1)`
		with = `WITH b AS MATERIALIZED (SELECT s.id AS summary, (SELECT id ` + kept + ` AS kept, (SELECT created_at ` + kept + ` AS kept_at
			FROM (SELECT id, metadata->>'compacts_before' AS cb FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Compaction + `
				AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT 1) s)
			`
		plain = `(@planned OR (NOT EXISTS (SELECT 1 FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Unkeyed + `)
		AND (@ignore_compaction OR NOT EXISTS (SELECT 1 FROM b WHERE kept IS NULL))))`
		summary = `(SELECT summary FROM b WHERE kept IS NOT NULL)`
		window = ` AND (created_at, id) >= (COALESCE((SELECT kept_at FROM b), ` + minAt + `), COALESCE((SELECT kept FROM b), ` + minID + `))`
	case windowSince:
		// created_at is stored to the microsecond, so "after since" is
		// "from since_next"; never past the session's last row.
		window = ` AND created_at >= ` + d.Least + `(@since_next, COALESCE((SELECT created_at FROM messages
			WHERE session_id = @sid AND tenant_id = @tenant ORDER BY created_at DESC, id DESC LIMIT 1), @since_next))`
	case windowLast:
		// From the lastN-th live row from the end, or the first row: a row
		// comparison the (session_id, created_at, id) index ranges over.
		nth := `FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND deleted_at IS NULL AND created_at IS NOT NULL ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET @nth`
		window = ` AND (created_at, id) >= (COALESCE((SELECT created_at ` + nth + `), (SELECT created_at ` + first + `)),
			COALESCE((SELECT id ` + nth + `), (SELECT id ` + first + `)))`
	case windowFrom:
		// From the row of that id: its created_at read as stored (a value
		// bound from Go might not compare equal to SQLite's text), the
		// same row comparison of the session index.
		window = ` AND (created_at, id) >= ((SELECT created_at FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND id = @from), @from)`
	}
	// The check is written once, in a CTE both its uses read: written out
	// in the select list and the LIMIT, PostgreSQL ran its two probes
	// twice a load (four InitPlans). A compacted load's b comes first.
	if with == "" {
		with = `WITH `
	} else {
		with += `, `
	}
	return with + `p AS (SELECT ` + plain + ` AS ok)
	SELECT id, role, CASE WHEN n > @long THEN ` + d.Head + ` ELSE content END, CASE WHEN n > @long THEN ` + d.Tail + ` END,
	CASE WHEN n > @long THEN n ELSE -1 END, (SELECT ok FROM p), ` + last + ` AS last_live,
	ek, tcid, tname, targs, author, usage, compaction, cb, items, src, agents, model, reasoning, trace, span, created_at, deleted_at,
	` + summary + ` AS summary
	FROM (SELECT id, role, content, created_at, deleted_at,
		CASE WHEN @long >= 0 AND (role = 'assistant' OR role = '') AND deleted_at IS NULL AND ` + d.Bytes + ` > @whole THEN ` + d.Length + ` END AS n,
		metadata->>'entity_key' AS ek,
		CASE WHEN @all OR role = 'tool' THEN metadata->>'tool_call_id' END AS tcid,
		CASE WHEN @all OR role = 'tool' THEN metadata->>'tool_name' END AS tname,
		CASE WHEN @all OR role = 'tool' THEN metadata->'tool_arguments' END AS targs,
		CASE WHEN @all THEN metadata->>'author' END AS author, CASE WHEN @all THEN metadata->'usage' END AS usage,
		CASE WHEN @all OR @summaries OR ` + summary + ` IS NOT NULL THEN metadata->'compaction' END AS compaction, CASE WHEN @all THEN metadata->'compacts_before' END AS cb,
		CASE WHEN @all_or_sources THEN tool_calls->'items' END AS items,
		CASE WHEN @all_or_sources THEN metadata->'pydantic_ai' END AS src, CASE WHEN @all THEN metadata->'openai_agents' END AS agents,
		CASE WHEN @all THEN metadata->>'model' END AS model, CASE WHEN @all THEN metadata->'reasoning' END AS reasoning,
		CASE WHEN @all THEN trace_id END AS trace, CASE WHEN @all THEN span_id END AS span
		FROM messages WHERE session_id = @sid AND tenant_id = @tenant` + window + ` ORDER BY created_at, id
		LIMIT CASE WHEN (SELECT ok FROM p) THEN CAST(@limit AS bigint) ELSE 1 END OFFSET @offset) x
	ORDER BY created_at, id`
}

// rowsTexts are rowsQuery's statements by dialect and window.
var rowsTexts = func() (q struct {
	lite, pg [windows]repository.Named[rowsParams]
}) {
	for w := range q.pg {
		q.lite[w] = repository.NewNamed[rowsParams](rowsQuery(repository.SQLFor(false), w))
		q.pg[w] = repository.NewNamed[rowsParams](rowsQuery(repository.SQLFor(true), w))
	}
	return q
}()

// window indexes rowsTexts: the one place that decides where a rows query
// starts, for both drivers.
func (q rowsArgs) window() int {
	switch {
	case q.from != uuid.Nil:
		return windowFrom
	case q.lastN > 0:
		return windowLast
	case !q.since.IsZero():
		return windowSince
	}
	return windowAll
}

// eachRowSQL is eachRow through database/sql, for any dialect and for a
// store running inside a transaction.
func eachRowSQL(ctx context.Context, db bun.IDB, q rowsArgs, fn func(storedRow) error) error {
	st := rowsTexts.lite[q.window()]
	if repository.IsPostgres(db) {
		st = rowsTexts.pg[q.window()] // bun inlines the ? values (in a transaction)
	}
	rs, err := db.QueryContext(ctx, st.Bun(), st.BunArgs(q.params())...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		var r storedRow
		var tail, key, callID, name, author, compaction, before, model, traceID, spanID sql.NullString
		var args, usage, calls, src, agents, reasoning []byte
		var created, deleted dbTime
		var last, summary uuid.NullUUID
		if err := rs.Scan(&r.ID, &r.Role, &r.Content, &tail, &r.Length, &r.Plain, &last, &key, &callID, &name, &args, &author, &usage, &compaction, &before,
			&calls, &src, &agents, &model, &reasoning, &traceID, &spanID, &created, &deleted, &summary); err != nil {
			return err
		}
		r.Summary = summary.UUID
		r.Tail = tail.String
		r.Last = last.UUID // uuid.Nil when the session holds no live row
		r.Key, r.ToolCallID, r.ToolName, r.Author = key.String, callID.String, name.String, author.String
		r.Model, r.Reasoning = model.String, compactRaw(reasoning)
		r.TraceID, r.SpanID = traceID.String, spanID.String
		r.ToolArgs, r.Usage, r.ToolCalls = compactRaw(args), compactRaw(usage), compactRaw(calls)
		r.Source, r.AgentsItem = compactRaw(src), compactRaw(agents)
		r.Compaction = compaction.String == "true"
		r.CompactsBefore = coversBefore(before.String)
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

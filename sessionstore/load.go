package sessionstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/visible"
)

// storedRow is what history assembly needs of a messages row: exactly these
// fields, not the whole metadata document, in load order (the tenant's rows
// of one session, soft-deleted ones included, by created_at, id).
type storedRow struct {
	ID             uuid.UUID
	Role           models.Role
	Content        string          // the head only when Length >= 0
	Tail           string          // the last T code points of a content the database cut
	Length         int             // the cut content's length in code points; -1: Content is whole
	Key            string          // metadata.entity_key
	ToolCallID     string          // metadata.tool_call_id
	ToolName       string          // metadata.tool_name
	ToolArgs       json.RawMessage // metadata.tool_arguments
	Author         string          // metadata.author
	Model          string          // metadata.model
	Reasoning      json.RawMessage // metadata.reasoning
	TraceID        string          // column trace_id
	SpanID         string          // column span_id
	Usage          json.RawMessage // metadata.usage
	ToolCalls      json.RawMessage // tool_calls.items
	Source         json.RawMessage // metadata.pydantic_ai (convert.SourceKey)
	AgentsItem     json.RawMessage // metadata.openai_agents (AgentsSourceKey)
	Compaction     bool            // metadata.compaction
	CompactsBefore int             // metadata.compacts_before
	CreatedAt      time.Time
	Deleted        bool
	Plain          bool      // the load needs no plan (rowsArgs.unplanned); always true otherwise
	Last           uuid.UUID // the session's last live row of the tenant (uuid.Nil: none), the same in every row
	Summary        uuid.UUID // the compaction summary a load from it hands out first (rowsArgs.fromSummary; uuid.Nil: none), the same in every row
}

// compactionStart returns, for the last live compaction summary, its row
// position and the position of the first message it does not cover.
func compactionStart(rows []storedRow) (summary, from int, ok bool) {
	for p := len(rows) - 1; p >= 0; p-- {
		if !rows[p].Deleted && rows[p].Compaction {
			return p, rows[p].CompactsBefore, true
		}
	}
	return 0, 0, false
}

// coversBefore reads a summary's compacts_before as a query printed it
// (JSON or text): the position of the first row it leaves shown, never
// below 0 (a negative one, which no compaction writes, covers nothing); a
// value that is no integer is 0 too.
func coversBefore(text string) int {
	if text == "" { // most rows: Atoi's error for "" was an allocation a row
		return 0
	}
	n, _ := strconv.Atoi(strings.Trim(text, `"`))
	return max(n, 0)
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := x.Int64()
		return int(n), err == nil
	case float64:
		return int(x), true
	case int:
		return x, true
	case int64:
		return int(x), true
	}
	return 0, false
}

// toHistory maps a row to the message dict of the contract with the Python service: the Python service's keys, and
// with extras the author, tool_calls and usage remstore stored.
func toHistory(r storedRow, extras, sources bool) models.HistoryMessage {
	role := r.Role
	if role == "" {
		role = models.RoleAssistant
	}
	ts := models.FormatTimestamp(r.CreatedAt)
	m := models.HistoryMessage{Role: role, Content: r.Content, Timestamp: &ts}
	if role == models.RoleTool {
		m.ToolCallID, m.ToolName = r.ToolCallID, r.ToolName
		if msgcheck.RawTruthy(r.ToolArgs) {
			m.ToolArguments = r.ToolArgs
		}
	}
	if (extras || sources) && len(r.Source) > 0 && r.Source[0] == '{' {
		m.Extra = append(m.Extra, models.Field{Key: convert.SourceKey, Value: r.Source})
	}
	var oddCalls json.RawMessage
	if (extras || sources) && len(r.ToolCalls) > 2 && r.ToolCalls[0] == '[' {
		// The typed calls, which convert prefers to synthesizing; a list
		// another writer (the peer takes any) wrote in a shape of its own
		// stays as it is under its key, for an extras load to show.
		calls, err := models.ParseToolCalls(r.ToolCalls)
		if err == nil {
			m.ToolCalls = calls
		} else {
			oddCalls = r.ToolCalls
		}
	}
	if !extras {
		return m
	}
	if len(r.AgentsItem) > 0 && r.AgentsItem[0] == '{' {
		m.Extra = append(m.Extra, models.Field{Key: AgentsSourceKey, Value: r.AgentsItem})
	}
	if r.Author != "" {
		b, _ := json.Marshal(r.Author)
		m.Extra = append(m.Extra, models.Field{Key: "author", Value: b})
	}
	if r.Model != "" {
		m.Extra = append(m.Extra, models.Field{Key: "model", Value: models.AppendJSONString(nil, r.Model)})
	}
	if len(r.Reasoning) > 2 && r.Reasoning[0] == '[' {
		m.Extra = append(m.Extra, models.Field{Key: ReasoningKey, Value: r.Reasoning})
	}
	if oddCalls != nil {
		m.Extra = append(m.Extra, models.Field{Key: "tool_calls", Value: oddCalls})
	}
	if msgcheck.RawTruthy(r.Usage) {
		m.Extra = append(m.Extra, models.Field{Key: "usage", Value: r.Usage})
	}
	// The trace that wrote the message (the caller's, or the store span's:
	// tracing.go), which a full load stores back as it was.
	if r.TraceID != "" {
		m.Extra = append(m.Extra, models.Field{Key: "trace_id", Value: models.AppendJSONString(nil, r.TraceID)})
	}
	if r.SpanID != "" {
		m.Extra = append(m.Extra, models.Field{Key: "span_id", Value: models.AppendJSONString(nil, r.SpanID)})
	}
	if r.Compaction {
		// A compaction summary stands for the messages before this
		// position: the viewer shows the range it replaces.
		b, _ := json.Marshal(map[string]int{"replaces_before": r.CompactsBefore})
		m.Extra = append(m.Extra, models.Field{Key: "compaction", Value: b})
	}
	return m
}

// LoadOptions controls Load and LoadEach.
type LoadOptions struct {
	// NoCompress returns every message in full (export, debugging).
	NoCompress bool
	// Since, when set, returns only messages created after it, tool pairs
	// whole as LastN keeps them: a tool result at the start whose call was
	// created before Since is left out with it. Keys and positions still
	// count every earlier message.
	Since time.Time
	// IgnoreCompaction returns every message even after a compaction
	// (audit, export); by default a compaction summary replaces what it covers.
	IgnoreCompaction bool
	// Extras adds what remstore stores beyond the Python service (author, tool_calls,
	// usage, pydantic_ai, openai_agents, model, reasoning, trace_id,
	// span_id). A plain load has exactly the Python service's keys.
	Extras bool
	// Sources adds only convert.SourceKey, what a store of pydantic-ai
	// messages kept beyond the row, so that convert rebuilds those messages
	// part for part. The pydantic-ai loads of the CLI, HTTP API and MCP set it.
	Sources bool
	// LastN > 0 returns only the last LastN messages of the history, tool
	// pairs whole: a tool result whose call would be cut off at the start is
	// left out with it, so the history may hold fewer. A session only
	// remstore wrote and never compacted reads only those rows (an index
	// range from the end); any other reads every row and keeps the last.
	// It cannot be combined with Since.
	LastN int
	// OnLast, when set, is told the session's last live message of the
	// tenant (its id, or Empty) once, before the first message reaches the
	// caller (or at the end when none does): read in the same statement as
	// the rows, it is what a guarded store names (StoreOptions.ExpectLast).
	OnLast func(last string)
}

// check refuses options that cannot go together.
func (o LoadOptions) check() error {
	switch {
	case o.LastN < 0:
		return &models.FieldError{Index: -1, Field: "last", Reason: "must be >= 0"}
	case o.LastN > 0 && !o.Since.IsZero():
		return &models.FieldError{Index: -1, Field: "last", Reason: "cannot be combined with since"}
	}
	return nil
}

// ReasoningKey is the message key (and metadata key) of what a model SDK
// returned beside an answer that the next request to the same provider must
// carry back: Anthropic's thinking blocks, an OpenAI Responses reasoning
// item, Gemini's thought parts. A list of {"provider": name, "item": JSON};
// each adapter in sdk/ sends back its own provider's items and no other's,
// in the forms package visible keeps (its provider's, checkable by it).
const ReasoningKey = visible.ReasoningKey

// AgentsSourceKey is the message key (and metadata key) under which the
// Python client's OpenAI Agents SDK session keeps the SDK's input item a
// row was made from, so get_items returns it as it was added. A load hands
// it out only when the row's view (package visible) holds all of it.
const AgentsSourceKey = visible.AgentsKey

// Load returns the tenant's messages of the session in order, soft-deleted
// rows left out, with long assistant messages compressed. It
// collects LoadEach: one algorithm for both.
func (s *Store) Load(ctx context.Context, sessionKey string, o LoadOptions) ([]models.HistoryMessage, error) {
	out := make([]models.HistoryMessage, 0, 16)
	err := s.LoadEach(ctx, sessionKey, o, func(m models.HistoryMessage) error {
		if len(out) == cap(out) {
			// Doubled, where append grows a long slice by a quarter: a
			// 1,000-message load allocated three times its history
			// (half its garbage), twice now.
			out = append(make([]models.HistoryMessage, 0, 2*cap(out)), out...)
		}
		out = append(out, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// LoadEach hands the history Load returns to fn, message by message, while
// the rows stream from the database: memory stays flat in the number of
// messages. A session only remstore wrote loads in one statement, which
// checks that on the server; a compacted one reads from the row its last
// summary leaves shown first, found by its stored key, whatever the rows the
// summary covers. Any other (rows without a stored key, a compacted load of
// the last n or since a time) gets a small query first (where the last
// compaction summary stands, whether rows without a stored key exist). A retry after a lost connection happens only before
// the first message reached fn.
func (s *Store) LoadEach(ctx context.Context, sessionKey string, o LoadOptions, fn func(models.HistoryMessage) error) (err error) {
	ctx, span := s.span(ctx, "remstore.load", sessionKey)
	n := 0
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attrMessages.Int(n))
		}
		endSpan(span, err)
	}()
	return s.loadEachCounted(ctx, sessionKey, o, func(m models.HistoryMessage) error { n++; return fn(m) })
}

func (s *Store) loadEachCounted(ctx context.Context, sessionKey string, o LoadOptions, fn func(models.HistoryMessage) error) error {
	sid, err := s.SessionUUID(sessionKey)
	if err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if !s.enabled {
		return nil
	}
	started, last, err := s.loadEach(ctx, sid, o, fn)
	if err == nil && !started && isName(sessionKey) {
		// Nothing by the name's public id: the tenant's session of that
		// name may live at its private id (names.go).
		alt, ok, aerr := s.privateSession(ctx, sessionKey, false)
		switch {
		case aerr != nil:
			err = aerr
		case ok:
			started, last, err = s.loadEach(ctx, alt, o, fn)
		}
	}
	if err != nil {
		return err
	}
	if !started && o.OnLast != nil {
		o.OnLast(lastName(last))
	}
	return nil
}

// loadEach is LoadEach of one session id; started says whether a message
// reached fn (OnLast was called then).
func (s *Store) loadEach(ctx context.Context, sid uuid.UUID, o LoadOptions, fn func(models.HistoryMessage) error) (bool, uuid.UUID, error) {
	started := false
	var last uuid.UUID // of the statement whose rows reach fn; spelled once, for OnLast
	emit := func(m models.HistoryMessage) error {
		if !started && o.OnLast != nil {
			o.OnLast(lastName(last))
		}
		started = true
		return fn(m)
	}
	tail := newWindow(o, emit)
	err := s.withRetry(ctx, "load session "+sid.String(), func(err error) bool { return !started && connectionLost(err) }, func() error {
		err := s.stream(ctx, sid, loadPlan{summary: -1, unplanned: true}, o, &last, tail)
		if !errors.Is(err, errPlanNeeded) {
			return err
		}
		p, err := s.loadPlan(ctx, sid, o)
		if err != nil {
			return err
		}
		tail.buffer, tail.buf, tail.head = true, tail.buf[:0], 0 // every row comes: the window is known at the end
		return s.stream(ctx, sid, p, o, &last, tail)
	})
	if err == nil {
		err = tail.flush()
	}
	if err != nil {
		return started, last, fmt.Errorf("load session %s: %w", sid, err)
	}
	return started, last, nil
}

// lastName is how a guard names the last live message: its id, or Empty.
func lastName(id uuid.UUID) string {
	if id == uuid.Nil {
		return Empty
	}
	return id.String()
}

// window is the part of a history a load hands on when it starts after the
// history does, LoadOptions.LastN or LoadOptions.Since, with one rule for
// both and for both ways a load reads: tool results at the window's start
// are left out (their call is before the window, stored or to be
// synthesized: the pair is left out whole), so the window may hold fewer.
// Since's rows come already cut to the window (by the statement, or by
// historyOf) and stream. For LastN, where the rows read were already the
// last n (an index range from the end) it streams; where every row was
// read, it keeps the last n and hands them on at the end. A load from the
// start (neither option) passes everything.
type window struct {
	n      int  // LastN; 0: every message the load reads
	cut    bool // the window starts after the history does (LastN or Since)
	buffer bool
	buf    []models.HistoryMessage // a ring of the last n once full, oldest at head
	head   int
	opened bool // a message other than a tool result has been passed on
	fn     func(models.HistoryMessage) error
}

func newWindow(o LoadOptions, fn func(models.HistoryMessage) error) *window {
	return &window{n: o.LastN, cut: o.LastN > 0 || !o.Since.IsZero(), fn: fn}
}

func (w *window) add(m models.HistoryMessage) error {
	if !w.cut {
		return w.fn(m)
	}
	if w.buffer && w.n > 0 {
		if len(w.buf) < w.n {
			w.buf = append(w.buf, m)
		} else {
			w.buf[w.head], w.head = m, (w.head+1)%w.n
		}
		return nil
	}
	if !w.opened && m.Role == models.RoleTool {
		return nil
	}
	w.opened = true
	return w.fn(m)
}

// summary passes on a compaction summary, which a load hands out first: it
// stands for what comes before the window and does not open it (a tool
// result after it whose call is before Since is left out, as without it).
func (w *window) summary(m models.HistoryMessage) error {
	if !w.cut || w.buffer && w.n > 0 { // LastN: in the ring, as any message
		return w.add(m)
	}
	return w.fn(m)
}

// flush hands on what the window kept.
func (w *window) flush() error {
	if !w.buffer {
		return nil
	}
	w.buffer = false
	for i := range w.buf {
		if err := w.add(w.buf[(w.head+i)%len(w.buf)]); err != nil {
			return err
		}
	}
	w.buf, w.head = nil, 0
	return nil
}

// loadPlan is what a load must know before the rows stream.
type loadPlan struct {
	// summary is the position of the last live compaction summary (-1: none
	// or ignored) and from the position of the first message it leaves shown.
	summary, from int
	// summaryID and keptID, set only for a session only remstore wrote, are
	// the summary's row and the row at position from (found by its stored
	// key): the load reads index ranges from them, never the rows the
	// summary covers. Unset (the peer's rows, or no row holds the key
	// anymore), it reads by position.
	summaryID, keptID uuid.UUID
	// taken holds the stored keys of assistant rows, removed ones too; it is set only when
	// the session holds rows without a stored key (the peer's), whose keys
	// come from their live position and must not collide with these.
	taken map[string]bool
	// unplanned streams as if the session needed no plan, the query checking
	// that it does not (rowsArgs.unplanned); stream answers errPlanNeeded,
	// before any message, where it does.
	unplanned bool
}

// errPlanNeeded: the session needs loadPlan's query first.
var errPlanNeeded = errors.New("the load needs a plan")

func (s *Store) loadPlan(ctx context.Context, sid uuid.UUID, o LoadOptions) (loadPlan, error) {
	p := loadPlan{summary: -1}
	var unkeyed, pos int
	var summaryID, cb, index, kept sql.NullString
	// Both counts are probes of partial indexes (migration 4): empty for a
	// session only remstore wrote. Through the driver, so PostgreSQL plans
	// it once per connection (planning it per call cost more than running it).
	prefix := keyPrefix(sid)
	if s.byPosition {
		prefix = "by position: no key starts so " // no row is found by its key: the count
	}
	st := planQueries[s.sql.Postgres]
	err := s.queryRow(ctx, s.db, st.Bun(), st.BunArgs(&planParams{Sid: sid, Tenant: s.userID, Prefix: prefix}),
		&unkeyed, &summaryID, &pos, &cb, &index, &kept)
	if err != nil {
		return p, err
	}
	if summaryID.Valid && !o.IgnoreCompaction {
		p.summary = pos
		p.from = coversBefore(cb.String)
		if pos < 0 { // not counted: every row is remstore's and the kept one holds its key
			p.summary, _ = strconv.Atoi(index.String)
			p.summaryID, _ = uuid.Parse(summaryID.String)
			p.keptID, _ = uuid.Parse(kept.String)
		}
	}
	if unkeyed > 0 {
		var keys []string
		// Removed answers' keys too: Lookup answers such a key "removed",
		// so a position must not take it either (SPEC §4, amended).
		err := s.db.NewRaw("SELECT "+s.sql.EntityKey+" FROM messages WHERE session_id = ? AND tenant_id = ?"+
			" AND (role = 'assistant' OR role = '') AND "+s.sql.EntityKey+" <> ''", sid, s.userID).Scan(ctx, &keys)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return p, err
		}
		p.taken = make(map[string]bool, len(keys))
		for _, k := range keys {
			p.taken[k] = true
		}
	}
	return p, nil
}

// planParams name a tenant's session in loadPlan's statement
// (repository.Named), and the stored keys of its rows.
type planParams struct {
	Sid    uuid.UUID `sql:"sid"`
	Tenant string    `sql:"tenant"`
	Prefix string    `sql:"prefix"` // keyPrefix(Sid)
}

// keyPrefix is what the stored key of every row remstore wrote into session
// sid starts with; the position follows (compressor.BuildKey).
func keyPrefix(sid uuid.UUID) string {
	return "session-" + sid.String() + "-msg-"
}

// planQueries find what a load must know first, by dialect (true: PostgreSQL):
// the rows without a stored key, the last live compaction summary (its id,
// position, compacts_before and message_index) and the row it leaves shown
// first, found by its stored key through remstore_messages_entity_key. The
// position is a count of the rows before the summary only where it is
// needed: rows without a stored key (their keys count live rows from the
// start), or no row holding the kept row's key; else it is -1 and the load
// starts from the two rows (loadPlan.summaryID, keptID), whatever the
// session's length.
var planQueries = map[bool]repository.Named[planParams]{}

func init() {
	for _, pg := range []bool{true, false} {
		d := repository.SQLFor(pg)
		// SQLite's planner takes the session's index for the kept row
		// (session_id = ?) and reads the session through it; the key's
		// index finds one row.
		byKey := ""
		if !pg {
			byKey = " INDEXED BY remstore_messages_entity_key"
		}
		planQueries[pg] = repository.NewNamed[planParams](`SELECT unkeyed, last_id,
		CASE WHEN last_id IS NULL THEN 0 WHEN unkeyed = 0 AND kept_id IS NOT NULL THEN -1 ELSE
		(SELECT count(*) FROM messages m WHERE m.session_id = @sid AND m.tenant_id = @tenant
		   AND (m.created_at < last_at OR (m.created_at = last_at AND m.id < last_id))) END,
		cb, mi, kept_id
		FROM (SELECT u.n AS unkeyed, last.id AS last_id, last.created_at AS last_at, last.cb AS cb, last.mi AS mi,
			(SELECT id FROM messages` + byKey + ` WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.EntityKey + ` = @prefix || last.cb
			 LIMIT 1) AS kept_id
			FROM (SELECT count(*) AS n FROM messages WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Unkeyed + `) u
			LEFT JOIN (
				SELECT id, created_at, metadata->>'compacts_before' AS cb, metadata->>'message_index' AS mi FROM messages
				WHERE session_id = @sid AND tenant_id = @tenant AND ` + d.Compaction + ` AND deleted_at IS NULL
				ORDER BY created_at DESC, id DESC LIMIT 1) last ON true) plan`)
	}
}

// stream emits the history of the plan: the summary first, then the rows it
// leaves shown. Positional keys count live rows from the start, so a session
// with rows the Python service wrote streams from position 0 (skipping what the
// summary covers); one only remstore wrote starts where the summary says.
func (s *Store) stream(ctx context.Context, sid uuid.UUID, p loadPlan, o LoadOptions, last *uuid.UUID, w *window) error {
	pass := func(r storedRow, live int, fn func(models.HistoryMessage) error) error {
		m, ok, err := historyOf(r, live, sid, s.comp, p.taken, o)
		if err != nil || !ok {
			return err
		}
		return fn(m)
	}
	emit := func(r storedRow, live int) error { return pass(r, live, w.add) }
	summary := func(r storedRow) error { return pass(r, -1, w.summary) }
	// A session only remstore wrote reads from the summary's row and the
	// kept row by index ranges (rowsArgs.from); any other by position.
	keyset := p.taken == nil && p.keptID != uuid.Nil && p.summaryID != uuid.Nil
	if p.summary >= 0 {
		q := rowsArgs{sid: sid, tenant: s.userID, offset: p.summary, limit: 1, cut: s.cutFor(o), whole: s.whole, plain: !o.Extras, sources: o.Extras || o.Sources,
			last: o.OnLast != nil}
		if keyset {
			q.offset, q.from = 0, p.summaryID
		}
		err := s.eachRow(ctx, s.db, q,
			func(r storedRow) error {
				*last = r.Last
				return summary(r)
			})
		if err != nil {
			return err
		}
	}
	start := p.from
	if p.taken != nil {
		start = 0
	}
	pos, live := start, 0
	q := rowsArgs{sid: sid, tenant: s.userID, offset: start, limit: noLimit, cut: s.cutFor(o), whole: s.whole, plain: !o.Extras, sources: o.Extras || o.Sources,
		unplanned: p.unplanned, ignoreCompaction: o.IgnoreCompaction, fromSummary: p.unplanned && !s.byPosition, last: o.OnLast != nil,
		summaries: p.summary >= 0}
	if p.unplanned { // a planned load reads every row: positions count from the start
		q.lastN, q.since = o.LastN, o.Since
	}
	if keyset { // the first row read is at position from
		q.offset, q.from = 0, p.keptID
	}
	// A compacted session read from its first kept row (rowsArgs.fromSummary)
	// hands out the summary first: the kept rows before it wait in held,
	// a few (what the compaction kept), and follow it.
	var held []storedRow
	summarized := false
	err := s.eachRow(ctx, s.db, q, func(r storedRow) error {
		if !r.Plain {
			return errPlanNeeded
		}
		if p.summary < 0 {
			*last = r.Last
		}
		if r.Summary != uuid.Nil {
			switch {
			case r.Compaction && r.ID != r.Summary: // covered by the last one
				return nil
			case summarized:
				return emit(r, -1)
			case r.ID != r.Summary:
				held = append(held, r)
				return nil
			}
			summarized = true
			if err := summary(r); err != nil {
				return err
			}
			for _, h := range held {
				if err := emit(h, -1); err != nil {
					return err
				}
			}
			held = nil
			return nil
		}
		defer func() { pos++ }()
		if r.Deleted {
			return nil
		}
		live++
		// Every summary before the last is covered by it (a compaction
		// covers the summary a load showed first), though its row may come
		// after the rows the last one keeps: it is not shown again.
		if (keyset && r.ID == p.summaryID) || (!keyset && pos == p.summary) || pos < p.from || (p.summary >= 0 && r.Compaction) {
			return nil
		}
		return emit(r, live-1)
	})
	if err == nil && held != nil {
		err = errPlanNeeded // the summary was not among the rows read: nothing was handed out yet
	}
	return err
}

// historyOf is one row of a load: ok is false for a row the load leaves out
// (soft-deleted, or not after o.Since). A row without a stored key is cut with
// the key the Python service prints for it, from live (its position among the tenant's
// live rows; -1 = unknown), unless an assistant row, live or removed, holds that
// key: then it is cut without a key rather than with one that finds another
// message.
func historyOf(r storedRow, live int, sid uuid.UUID, comp *compressor.Compressor, taken map[string]bool, o LoadOptions) (models.HistoryMessage, bool, error) {
	if r.Deleted || (!o.Since.IsZero() && !r.CreatedAt.After(o.Since)) {
		return models.HistoryMessage{}, false, nil
	}
	m := toHistory(r, o.Extras, o.Sources)
	cutOnServer := r.Length >= 0
	head, tail, length := r.Content, r.Tail, r.Length
	if !cutOnServer {
		if o.NoCompress || (m.Role != models.RoleAssistant && m.Role != "") {
			return withViewedItem(m), true, nil
		}
		var ok bool
		if head, tail, length, ok = cutInGo(m.Content, comp.TruncateLength()); !ok {
			return withViewedItem(m), true, nil
		}
		// A head and tail cut here go through CompressParts as the
		// database's do: byte for byte what Compress gives (its contract),
		// without Compress counting and walking the whole answer four
		// times over (a fifth of an extras load's CPU, issue 57).
		cutOnServer = head != "" || tail != ""
	}
	key := r.Key
	if key == "" && live >= 0 {
		if key = compressor.BuildKey(sid.String(), live); taken[key] {
			key = ""
		}
	}
	var err error
	if cutOnServer {
		m, err = comp.CompressParts(m, head, tail, length, key)
	} else {
		m, err = comp.Compress(m, key)
	}
	if err != nil {
		return m, false, &models.FieldError{Index: live, Field: "content", Reason: err.Error()}
	}
	return withViewedItem(m), true, nil
}

// cutInGo says whether an answer the database sent whole is longer than
// 2*t code points (SPEC §3's rule, ShouldCompressOnLoad's count) and, when
// it is and is valid UTF-8, gives its first and last t code points and
// its length. An answer of invalid UTF-8 comes back with ok and no parts:
// Compress reports it. One count of the code points and one check of the
// bytes; an ASCII answer (as many code points as bytes) is cut by slicing.
func cutInGo(content string, t int) (head, tail string, n int, ok bool) {
	if len(content) <= 2*t { // never more code points than bytes
		return "", "", len(content), false
	}
	if n = asciiLen(content); n < 0 {
		n = utf8.RuneCountInString(content)
	}
	if n <= 2*t {
		return "", "", n, false
	}
	if !utf8.ValidString(content) {
		return "", "", n, true
	}
	if n == len(content) {
		return content[:t], content[len(content)-t:], n, true
	}
	k, bi, bj := 0, len(content), len(content)
	for off := range content {
		if k == t {
			bi = off
		}
		if k == n-t {
			bj = off
			break
		}
		k++
	}
	return content[:bi], content[bj:], n, true
}

// asciiLen is len(s) when s is ASCII, else -1: eight bytes a step, where
// utf8.RuneCountInString decodes byte by byte.
func asciiLen(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if (uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56)&0x8080808080808080 != 0 {
			return -1
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return -1
		}
	}
	return len(s)
}

// withViewedItem is m without its Agents SDK item when the row's view
// withholds part of it (a row stored before the view's rules): the Python
// client then hands the SDK the item the row's own fields make, which the
// view shows. A stored item the view holds whole goes out as it is.
func withViewedItem(m models.HistoryMessage) models.HistoryMessage {
	at := -1
	for k, f := range m.Extra {
		if f.Key == AgentsSourceKey {
			at = k
		}
	}
	if at < 0 || !visible.Of(m).Withholds(AgentsSourceKey) {
		return m
	}
	m.Extra = append(m.Extra[:at:at], m.Extra[at+1:]...)
	return m
}

// cutFor is T when the load compresses (long answers are cut: past
// cutWholeBytes on the database, shorter ones in Go),
// else 0.
func (s *Store) cutFor(o LoadOptions) int {
	if o.NoCompress {
		return 0
	}
	return s.comp.TruncateLength()
}

// allRows reads the tenant's rows of a session in load order (compaction and
// usage look at all of them).
func (s *Store) allRows(ctx context.Context, db conn, sid uuid.UUID) ([]storedRow, error) {
	var out []storedRow
	err := s.eachRow(ctx, db, rowsArgs{sid: sid, tenant: s.userID, limit: noLimit}, func(r storedRow) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// compactRaw drops the whitespace PostgreSQL prints in jsonb text, so both
// dialects hand out the same bytes. The text is the database's own print of
// a JSON value (jsonb, or SQLite's JSON written by remstore), valid already:
// json.Compact's validation of it again was 16% of a pydantic-ai load
// ; compactJSONText is 4x faster and gives the same bytes for
// valid JSON (FuzzCompactJSONText).
func compactRaw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return compactJSONText(b)
}

// compactJSONText drops the whitespace between the tokens of valid JSON
// text, and nothing inside its strings: what json.Compact does, without
// validating again what the database printed (a string is copied in one
// piece up to its closing quote).
func compactJSONText(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case ' ', '\n', '\t', '\r':
		case '"':
			j := i + 1
			for j < len(b) {
				k := bytes.IndexAny(b[j:], `"\\`)
				if k < 0 {
					j = len(b)
					break
				}
				j += k
				if b[j] == '"' {
					break
				}
				j += 2 // an escape and what it escapes
			}
			end := min(j+1, len(b))
			out = append(out, b[i:end]...)
			i = end - 1
		default:
			out = append(out, c)
		}
	}
	return out
}

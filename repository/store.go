package repository

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

// SessionNamespace is the UUIDv5 namespace that maps session keys which are
// not UUIDs to the UUID stored in sessions.id and messages.session_id:
// 52201df2-8d00-59ec-8da2-59ec0060ce05, which is
// UUIDv5(NameSpaceURL, "https://github.com/remstore/remstore/session").
// So "chat-42" is always UUIDv5(SessionNamespace, "chat-42"), in any language.
var SessionNamespace = uuid.MustParse("52201df2-8d00-59ec-8da2-59ec0060ce05")

// SessionUUID maps a session key to its UUID: a UUID (any form uuid.Parse
// accepts) is itself; any other non-empty string is UUIDv5(SessionNamespace, key).
func SessionUUID(key string) (uuid.UUID, error) {
	if err := checkID("session_id", key, MaxSessionKeyLength); err != nil {
		return uuid.Nil, err
	}
	if id, err := uuid.Parse(key); err == nil {
		return id, nil
	}
	return uuid.NewSHA1(SessionNamespace, []byte(key)), nil
}

// Store is the session message store bound to one user id, the tenant: it
// writes tenant_id = UserID and reads only that tenant's rows.
type Store struct {
	db      *bun.DB
	pg      bool
	userID  string
	comp    *compressor.Compressor
	enabled bool
	now     func() time.Time
	retries int
}

// StoreOptions configures NewStore.
type StoreOptions struct {
	// UserID is the tenant; required.
	UserID string
	// TruncateLength is T for load-time compression; 0 means 200.
	TruncateLength int
	// Disabled turns storage off (POSTGRES_ENABLED not true): storing returns
	// the messages unchanged, loading returns nothing, lookups find nothing.
	Disabled bool
	// Now is the clock for created_at; nil means time.Now.
	Now func() time.Time
	// Retries is how often a read (load, lookup) is retried after the
	// connection was lost, with exponential backoff from 50 ms; 0 means
	// DefaultRetries (3), a negative value none. Writes are retried only when
	// the request never reached the server.
	Retries int
}

// NewStore returns a store on db (migrated with Migrate).
func NewStore(db *bun.DB, o StoreOptions) (*Store, error) {
	if err := checkID("user_id", o.UserID, models.MaxIDLen); err != nil {
		return nil, err
	}
	t := o.TruncateLength
	if t == 0 {
		t = compressor.DefaultTruncateLength
	}
	c, err := compressor.New(t)
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	retries := o.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	return &Store{db: db, pg: db != nil && IsPostgres(db), userID: o.UserID, comp: c, enabled: !o.Disabled, now: now, retries: retries}, nil
}

// UserID returns the tenant the store is bound to.
func (s *Store) UserID() string { return s.userID }

// Enabled reports whether storage is on.
func (s *Store) Enabled() bool { return s.enabled }

// DB returns the database handle.
func (s *Store) DB() *bun.DB { return s.db }

// StoreResult says what a store call wrote.
type StoreResult struct {
	SessionID uuid.UUID
	// Keys[i] is the REM LOOKUP key of message i; IDs[i] its row id.
	Keys []string
	IDs  []uuid.UUID
	// Existing counts messages whose id was already stored in this session
	// (a retried call): they were not written again.
	Existing int
}

// StoreMessages writes msgs, uncompressed, as the next messages of the
// session, in one transaction: all or nothing. userID is written as user_id
// ("" = the store's). Concurrent calls on one session are serialized, so
// indexes are gap-free and each call's messages are contiguous.
func (s *Store) StoreMessages(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, userID string) (StoreResult, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return StoreResult{}, err
	}
	res := StoreResult{SessionID: sid}
	if !s.enabled {
		return res, nil
	}
	if userID == "" {
		userID = s.userID
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return res, err
	}
	if err := validateBatch(msgs); err != nil {
		return res, err
	}
	if len(msgs) == 0 {
		return res, nil
	}
	err = s.withRetry(ctx, "store", neverSent, func() error {
		if s.pg && !hasIDs(msgs) {
			var err error
			res, err = s.storeFast(ctx, sid, sessionKey, msgs, userID)
			return err
		}
		return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			var err error
			res, err = s.storeTx(ctx, tx, sid, sessionKey, msgs, userID, writeOpts{})
			return err
		})
	})
	if err != nil {
		return StoreResult{SessionID: sid}, fmt.Errorf("store %d messages in session %s: %w", len(msgs), sid, err)
	}
	return res, nil
}

func hasIDs(msgs []models.HistoryMessage) bool {
	for _, m := range msgs {
		if m.ID != "" {
			return true
		}
	}
	return false
}

// fastRow is one message as remstore_store_messages reads it.
type fastRow struct {
	ID        uuid.UUID       `json:"id"`
	Role      models.Role     `json:"role"`
	Content   string          `json:"content"`
	ToolCalls json.RawMessage `json:"tool_calls,omitempty"`
	Metadata  models.JSONMap  `json:"metadata"`
	TraceID   *string         `json:"trace_id,omitempty"`
	SpanID    *string         `json:"span_id,omitempty"`
}

// storeFast is the PostgreSQL store in one statement (see storeFunctionDDL):
// one round trip, one implicit transaction, all or nothing. Calls with
// caller-given ids take the transactional path, which checks them.
func (s *Store) storeFast(ctx context.Context, sid uuid.UUID, sessionKey string, msgs []models.HistoryMessage, userID string) (StoreResult, error) {
	res := StoreResult{SessionID: sid, Keys: make([]string, len(msgs)), IDs: make([]uuid.UUID, len(msgs))}
	now := s.now().UTC().Truncate(time.Microsecond)
	rows := make([]fastRow, len(msgs))
	for i, m := range msgs {
		row, err := newRow(m, sid, 0, "", userID, s.userID, now)
		if err != nil {
			return res, &models.FieldError{Index: i, Reason: err.Error()}
		}
		delete(row.Metadata, "message_index") // the function sets both
		delete(row.Metadata, "entity_key")
		rows[i] = fastRow{ID: row.ID, Role: row.Role, Content: row.Content, ToolCalls: json.RawMessage(row.ToolCalls),
			Metadata: row.Metadata, TraceID: row.TraceID, SpanID: row.SpanID}
		res.IDs[i] = row.ID
	}
	payload, err := json.Marshal(rows)
	if err != nil {
		return res, err
	}
	var status string
	var first sql.NullInt64
	err = s.db.QueryRowContext(ctx, "SELECT status, first_index FROM remstore_store_messages(?, ?, ?, ?, ?, ?, ?)",
		sid, lockKey(sid), sessionKey, userID, s.userID, now, string(payload)).Scan(&status, &first)
	if err != nil {
		return res, err
	}
	if status != models.StatusActive {
		return res, fmt.Errorf("%w: status is %q", ErrSessionNotActive, status)
	}
	for i := range msgs {
		res.Keys[i] = compressor.BuildKey(sid.String(), int(first.Int64)+i)
	}
	return res, nil
}

// StoreMessage stores one message and returns its REM LOOKUP key.
func (s *Store) StoreMessage(ctx context.Context, sessionKey string, msg models.HistoryMessage, userID string) (string, error) {
	res, err := s.StoreMessages(ctx, sessionKey, []models.HistoryMessage{msg}, userID)
	if err != nil || len(res.Keys) == 0 {
		return "", err
	}
	return res.Keys[0], nil
}

// writeOpts are the internal variations of a store: lifecycle messages are
// written to sessions that are no longer active, and compaction summaries
// carry extra metadata.
type writeOpts struct {
	allowInactive bool
	extraMeta     models.JSONMap
}

func (s *Store) storeTx(ctx context.Context, tx bun.Tx, sid uuid.UUID, sessionKey string, msgs []models.HistoryMessage, userID string, wo writeOpts) (StoreResult, error) {
	res := StoreResult{SessionID: sid, Keys: make([]string, len(msgs)), IDs: make([]uuid.UUID, len(msgs))}
	now := s.now().UTC().Truncate(time.Microsecond)
	if s.pg {
		// One writer per session at a time; SQLite's BEGIN IMMEDIATE
		// already serializes all writers.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(sid)); err != nil {
			return res, fmt.Errorf("lock session: %w", err)
		}
	}
	status, err := ensureSession(ctx, tx, sid, sessionKey, userID, s.userID, now)
	if err != nil {
		return res, err
	}
	if status != "" && status != models.StatusActive && !wo.allowInactive {
		return res, fmt.Errorf("%w: status is %q", ErrSessionNotActive, status)
	}
	skip, err := s.existingIDs(ctx, tx, sid, msgs, &res)
	if err != nil {
		return res, err
	}
	var n int
	var last dbTime
	err = tx.NewRaw(`SELECT COALESCE(SUM(CASE WHEN tenant_id = ? THEN 1 ELSE 0 END), 0), MAX(created_at)
		FROM messages WHERE session_id = ?`, s.userID, sid).Scan(ctx, &n, &last)
	if err != nil {
		return res, fmt.Errorf("read session position: %w", err)
	}
	// created_at strictly increases within the session, whatever the clock
	// does, so that the peer (which orders by created_at alone) agrees.
	base := now
	if last.Valid && !base.After(last.Time) {
		base = last.Time.Add(time.Microsecond)
	}
	rows := make([]*models.Message, 0, len(msgs))
	for i, m := range msgs {
		if skip[i] {
			continue
		}
		idx := n + len(rows)
		key := compressor.BuildKey(sid.String(), idx)
		row, err := newRow(m, sid, idx, key, userID, s.userID, base.Add(time.Duration(len(rows))*time.Microsecond))
		if err != nil {
			return res, &models.FieldError{Index: i, Reason: err.Error()}
		}
		for k, v := range wo.extraMeta {
			row.Metadata[k] = v
		}
		rows = append(rows, row)
		res.Keys[i], res.IDs[i] = key, row.ID
	}
	const chunk = 1000
	for lo := 0; lo < len(rows); lo += chunk {
		part := rows[lo:min(lo+chunk, len(rows))]
		if _, err := tx.NewInsert().Model(&part).Exec(ctx); err != nil {
			return res, fmt.Errorf("insert messages: %w", err)
		}
	}
	return res, nil
}

// lockKey is the advisory-lock key of a session.
func lockKey(sid uuid.UUID) int64 {
	return int64(binary.BigEndian.Uint64(sid[:8]) ^ binary.BigEndian.Uint64(sid[8:]))
}

// ensureSession creates the session row on first store (SPEC §2) and marks
// activity on later ones; it returns the session's status.
func ensureSession(ctx context.Context, db bun.IDB, sid uuid.UUID, sessionKey, userID, tenantID string, now time.Time) (string, error) {
	sess := &models.Session{
		ID: sid, Name: models.Ptr(sessionKey), Status: models.StatusActive,
		UserID: models.Ptr(userID), TenantID: models.Ptr(tenantID),
		CreatedAt: now, UpdatedAt: now,
	}
	var status sql.NullString
	err := db.NewInsert().Model(sess).
		On("CONFLICT (id) DO UPDATE").Set("updated_at = EXCLUDED.updated_at").
		Returning("status").Scan(ctx, &status)
	if err != nil {
		return "", fmt.Errorf("ensure session: %w", err)
	}
	return status.String, nil
}

// existingIDs finds messages whose caller-given id is already stored. In
// this session and tenant it is a retry: the message is skipped and keeps its
// key. Anywhere else the id is taken and the call fails.
func (s *Store) existingIDs(ctx context.Context, tx bun.Tx, sid uuid.UUID, msgs []models.HistoryMessage, res *StoreResult) (map[int]bool, error) {
	byID := map[uuid.UUID]int{}
	for i, m := range msgs {
		if m.ID != "" {
			byID[uuid.MustParse(m.ID)] = i // validated
		}
	}
	if len(byID) == 0 {
		return nil, nil
	}
	ids := make([]uuid.UUID, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	var found []struct {
		ID        uuid.UUID `bun:"id"`
		SessionID uuid.UUID `bun:"session_id"`
		TenantID  *string   `bun:"tenant_id"`
		Key       *string   `bun:"ek"`
	}
	err := tx.NewRaw("SELECT id, session_id, tenant_id, "+entityKeyExpr(s.pg)+" AS ek FROM messages WHERE id IN (?)",
		bun.List(ids)).Scan(ctx, &found)
	if err != nil {
		return nil, fmt.Errorf("check message ids: %w", err)
	}
	skip := map[int]bool{}
	for _, f := range found {
		i := byID[f.ID]
		if f.SessionID != sid || f.TenantID == nil || *f.TenantID != s.userID {
			return nil, fieldErr(i, "id", "already used by another message")
		}
		skip[i] = true
		res.IDs[i], res.Existing = f.ID, res.Existing+1
		if f.Key != nil {
			res.Keys[i] = *f.Key
		}
	}
	return skip, nil
}

// newRow builds the row of SPEC §2 for one message.
func newRow(m models.HistoryMessage, sid uuid.UUID, idx int, key, userID, tenantID string, at time.Time) (*models.Message, error) {
	id := uuid.New()
	if m.ID != "" {
		id = uuid.MustParse(m.ID) // validated
	}
	meta := models.JSONMap{"message_index": idx, "entity_key": key, "timestamp": nil}
	if m.Timestamp != nil {
		meta["timestamp"] = *m.Timestamp
	}
	if m.Role.IsTool() {
		if m.ToolCallID != "" {
			meta["tool_call_id"] = m.ToolCallID
		}
		if m.ToolName != "" {
			meta["tool_name"] = m.ToolName
		}
		if m.ToolArguments != nil {
			meta["tool_arguments"] = json.RawMessage(m.ToolArguments)
		}
	}
	row := &models.Message{
		ID: id, SessionID: sid, Role: m.Role, Content: m.Content, Metadata: meta,
		UserID: models.Ptr(userID), TenantID: models.Ptr(tenantID), CreatedAt: at, UpdatedAt: at,
	}
	for _, f := range m.Extra {
		if string(f.Value) == "null" {
			continue
		}
		switch f.Key {
		case "model", "agent_schema", "usage":
			meta[f.Key] = f.Value
		case "author":
			v, _ := m.ExtraString(f.Key)
			meta["author"] = v
		case "trace_id":
			v, _ := m.ExtraString(f.Key)
			row.TraceID = models.Ptr(v)
		case "span_id":
			v, _ := m.ExtraString(f.Key)
			row.SpanID = models.Ptr(v)
		case "tool_calls":
			var list []json.RawMessage
			if err := json.Unmarshal(f.Value, &list); err != nil {
				return nil, errors.New(`field "tool_calls": must be a list`)
			}
			if len(list) > 0 {
				row.ToolCalls = models.NullJSON(`{"items":` + string(f.Value) + `}`)
			}
		}
	}
	return row, nil
}

// LoadOptions controls Load.
type LoadOptions struct {
	// NoCompress returns every message in full (export, debugging).
	NoCompress bool
	// Since, when set, returns only messages created after it. Keys and
	// positions still count every earlier message.
	Since time.Time
	// IgnoreCompaction returns every message even after a compaction
	// (audit, export); by default a compaction summary replaces what it covers.
	IgnoreCompaction bool
}

// Load returns the tenant's messages of the session in order, soft-deleted
// rows left out, with long assistant messages compressed (SPEC §3-4).
func (s *Store) Load(ctx context.Context, sessionKey string, o LoadOptions) ([]models.HistoryMessage, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return nil, err
	}
	if !s.enabled {
		return []models.HistoryMessage{}, nil
	}
	var rows []storedRow
	err = s.withRetry(ctx, "load session "+sid.String(), connectionLost, func() error {
		var err error
		rows, err = s.rows(ctx, sid)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", sid, err)
	}
	return buildHistory(rows, sid, s.comp, o)
}

// rowsQuery reads only the fields history assembly needs; -> and ->> mean the
// same on PostgreSQL and SQLite, so one text serves both.
const rowsQuery = `SELECT id, role, content, metadata->>'entity_key', metadata->>'tool_call_id', metadata->>'tool_name',
	metadata->'tool_arguments', metadata->>'author', metadata->'usage', metadata->'compaction', metadata->'compacts_before',
	tool_calls->'items', created_at, deleted_at
	FROM messages WHERE session_id = ? AND tenant_id = ? ORDER BY created_at, id LIMIT ? OFFSET ?`

// compactRaw drops the whitespace PostgreSQL prints in jsonb text, so both
// dialects hand out the same bytes.
func compactRaw(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return json.RawMessage(bytes.Clone(b))
	}
	return out.Bytes()
}

// The hottest reads skip bun on PostgreSQL: with $n parameters and pgx's
// statement cache the server parses and plans them once per connection,
// not on every call as it must with bun's inlined text.
var (
	rowsQueryPG   = strings.NewReplacer("session_id = ?", "session_id = $1", "tenant_id = ?", "tenant_id = $2", "LIMIT ?", "LIMIT $3", "OFFSET ?", "OFFSET $4").Replace(rowsQuery)
	lookupKeyPG   = "SELECT content FROM messages WHERE " + entityKeyExpr(true) + " = $1 AND tenant_id = $2 AND deleted_at IS NULL LIMIT 1"
	lookupIndexPG = "SELECT content, " + entityKeyExpr(true) + " AS ek, deleted_at FROM messages " +
		"WHERE session_id = $1 AND tenant_id = $2 ORDER BY created_at, id LIMIT 1 OFFSET $3"
)

// query runs pgSQL ($n) natively on PostgreSQL with the statement cache, or
// liteSQL (?) through bun elsewhere.
func (s *Store) query(ctx context.Context, pgSQL, liteSQL string, args ...any) (*sql.Rows, error) {
	if s.pg {
		return s.db.DB.QueryContext(ctx, pgSQL, append([]any{pgx.QueryExecModeCacheStatement}, args...)...)
	}
	return s.db.QueryContext(ctx, liteSQL, args...)
}

// queryRow is query for one row; sql.ErrNoRows when there is none.
func (s *Store) queryRow(ctx context.Context, pgSQL, liteSQL string, args []any, dest ...any) error {
	rs, err := s.query(ctx, pgSQL, liteSQL, args...)
	if err != nil {
		return err
	}
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

// noLimit is "all rows" for rowsQuery's LIMIT.
const noLimit = int64(1) << 62

// rows reads the tenant's rows of a session in load order.
func (s *Store) rows(ctx context.Context, sid uuid.UUID) ([]storedRow, error) {
	var out []storedRow
	err := s.eachRow(ctx, sid, 0, noLimit, func(r storedRow) error { out = append(out, r); return nil })
	return out, err
}

// eachRow hands the tenant's rows of a session to fn in load order, from
// position offset, at most limit of them, without holding them.
func (s *Store) eachRow(ctx context.Context, sid uuid.UUID, offset int, limit int64, fn func(storedRow) error) error {
	if s.pg {
		return s.eachRowPG(ctx, sid, offset, limit, fn)
	}
	rs, err := s.db.QueryContext(ctx, rowsQuery, sid, s.userID, limit, offset)
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

// eachRowPG reads the rows through pgx's own Rows on the pooled connection:
// binary results scanned straight into Go types, without database/sql's
// per-value conversions, which cost most of a large load.
func (s *Store) eachRowPG(ctx context.Context, sid uuid.UUID, offset int, limit int64, fn func(storedRow) error) error {
	conn, err := s.db.DB.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		rs, err := c.Conn().Query(ctx, rowsQueryPG, pgx.QueryExecModeCacheStatement, sid, s.userID, limit, offset)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var r storedRow
			var id [16]byte
			var role string
			var key, callID, name, author, compaction, before *string
			var args, usage, calls []byte
			var deleted *time.Time
			if err := rs.Scan(&id, &role, &r.Content, &key, &callID, &name, &args, &author, &usage, &compaction, &before,
				&calls, &r.CreatedAt, &deleted); err != nil {
				return err
			}
			r.ID, r.Role = uuid.UUID(id), models.Role(role)
			r.Key, r.ToolCallID, r.ToolName, r.Author = deref(key), deref(callID), deref(name), deref(author)
			r.ToolArgs, r.Usage, r.ToolCalls = compactRaw(args), compactRaw(usage), compactRaw(calls)
			r.Compaction = deref(compaction) == "true"
			r.CompactsBefore, _ = strconv.Atoi(deref(before))
			r.CreatedAt, r.Deleted = r.CreatedAt.UTC(), deleted != nil
			if err := fn(r); err != nil {
				return err
			}
		}
		return rs.Err()
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// LoadEach hands the history Load would return to fn, message by message,
// while the rows stream from the database: memory stays flat in the number
// of messages. Two small queries come first: where the last compaction
// summary stands, and, only for a session holding rows the peer wrote (rows
// without a stored key), the keys other rows hold. A retry after a lost
// connection happens only before the first message reached fn.
func (s *Store) LoadEach(ctx context.Context, sessionKey string, o LoadOptions, fn func(models.HistoryMessage) error) error {
	sid, err := SessionUUID(sessionKey)
	if err != nil || !s.enabled {
		return err
	}
	// The plan: rows without a stored key, and where the last compaction
	// summary stands. Both come from partial indexes (migration 4).
	var plan struct {
		Unkeyed        int
		Summary        sql.NullString // the summary row's id, when there is one
		SummaryPos     int
		CompactsBefore sql.NullString
	}
	err = s.withRetry(ctx, "load session "+sid.String(), connectionLost, func() error {
		return s.db.NewRaw(`SELECT
			(SELECT count(*) FROM messages WHERE session_id = ? AND tenant_id = ? AND `+unkeyedPred(s.pg)+`),
			last.id,
			CASE WHEN last.id IS NULL THEN 0 ELSE -- counted only when there is a summary
			(SELECT count(*) FROM messages m WHERE m.session_id = ? AND m.tenant_id = ?
			   AND (m.created_at < last.created_at OR (m.created_at = last.created_at AND m.id < last.id))) END,
			last.cb
			FROM (SELECT 1) one LEFT JOIN (
				SELECT id, created_at, metadata->>'compacts_before' AS cb FROM messages
				WHERE session_id = ? AND tenant_id = ? AND `+compactionPred(s.pg)+` AND deleted_at IS NULL
				ORDER BY created_at DESC, id DESC LIMIT 1) last ON true`,
			sid, s.userID, sid, s.userID, sid, s.userID).
			Scan(ctx, &plan.Unkeyed, &plan.Summary, &plan.SummaryPos, &plan.CompactsBefore)
	})
	if err != nil {
		return fmt.Errorf("load session %s: %w", sid, err)
	}
	ek := entityKeyExpr(s.pg)
	var stored map[string]bool
	if plan.Unkeyed > 0 {
		stored = map[string]bool{}
		var keys []string
		if err := s.db.NewRaw("SELECT "+ek+" FROM messages WHERE session_id = ? AND tenant_id = ? AND "+ek+" <> ''",
			sid, s.userID).Scan(ctx, &keys); err != nil {
			return fmt.Errorf("load session %s: %w", sid, err)
		}
		for _, k := range keys {
			stored[k] = true
		}
	}
	emit := func(r storedRow, p int) error {
		m, ok, err := historyOf(r, p, sid, s.comp, stored, o)
		if err != nil || !ok {
			return err
		}
		return fn(m)
	}
	from, summary := 0, -1
	if plan.Summary.Valid && !o.IgnoreCompaction {
		summary = plan.SummaryPos
		from, _ = strconv.Atoi(plan.CompactsBefore.String)
		if err := s.eachRow(ctx, sid, summary, 1, func(r storedRow) error { return emit(r, summary) }); err != nil {
			return fmt.Errorf("load session %s: %w", sid, err)
		}
	}
	p := from
	err = s.eachRow(ctx, sid, from, noLimit, func(r storedRow) error {
		defer func() { p++ }()
		if p == summary {
			return nil
		}
		return emit(r, p)
	})
	if err != nil {
		return fmt.Errorf("load session %s: %w", sid, err)
	}
	return nil
}

// Lookup returns the full content behind a REM LOOKUP key (bare, or as a
// "REM LOOKUP <key>" / "LOOKUP <key>" phrase), for the store's tenant only.
// It tries the stored entity_key (one index probe), then the key's position
// in its session. ErrNotFound when nothing matches.
func (s *Store) Lookup(ctx context.Context, key string) (string, error) {
	k, err := compressor.ParseKey(key)
	if err != nil {
		return "", &models.FieldError{Index: -1, Field: "key", Reason: err.Error()}
	}
	if !s.enabled {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	var content string
	err = s.withRetry(ctx, "lookup "+k.Raw, connectionLost, func() error {
		var err error
		content, err = s.lookup(ctx, k)
		return err
	})
	return content, err
}

// lookup is one attempt of Lookup.
func (s *Store) lookup(ctx context.Context, k compressor.Key) (string, error) {
	var content string
	err := s.queryRow(ctx, lookupKeyPG, "SELECT content FROM messages WHERE "+entityKeyExpr(false)+" = ? AND tenant_id = ? AND deleted_at IS NULL LIMIT 1",
		[]any{k.Raw, s.userID}, &content)
	if err == nil {
		return content, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, err)
	}
	if k.Opaque {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	sid, err := SessionUUID(k.SessionID)
	if err != nil {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	// The positional key: the row at index n among the tenant's rows of the
	// session, counted as Load counts them, if that row has no stored key.
	var row struct {
		Content string
		Key     *string
		Deleted dbTime
	}
	err = s.queryRow(ctx, lookupIndexPG, "SELECT content, "+entityKeyExpr(false)+" AS ek, deleted_at FROM messages "+
		"WHERE session_id = ? AND tenant_id = ? ORDER BY created_at, id LIMIT 1 OFFSET ?",
		[]any{sid, s.userID, k.Index}, &row.Content, &row.Key, &row.Deleted)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("lookup %s: %w", k.Raw, err)
	case row.Deleted.Valid || (row.Key != nil && *row.Key != "" && *row.Key != k.Raw):
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	return row.Content, nil
}

// LookupIndex is Lookup by (session, index).
func (s *Store) LookupIndex(ctx context.Context, sessionKey string, n int) (string, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", fieldErr(-1, "index", "must be >= 0")
	}
	return s.Lookup(ctx, compressor.BuildKey(sid.String(), n))
}

// Expand restores every compressed message of msgs by key (see Expand).
func (s *Store) Expand(ctx context.Context, msgs []models.HistoryMessage) ([]models.HistoryMessage, error) {
	return Expand(ctx, s, msgs)
}

// EnsureSession creates the session row unless it exists and returns its id.
func (s *Store) EnsureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error) {
	sid, err := SessionUUID(sessionKey)
	if err != nil || !s.enabled {
		return sid, err
	}
	if userID == "" {
		userID = s.userID
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return sid, err
	}
	_, err = ensureSession(ctx, s.db, sid, sessionKey, userID, s.userID, s.now().UTC().Truncate(time.Microsecond))
	return sid, err
}

// RenameSession sets the session's name.
func (s *Store) RenameSession(ctx context.Context, sessionKey, name string) error {
	sid, err := SessionUUID(sessionKey)
	if err != nil || !s.enabled {
		return err
	}
	if err := checkText(-1, "name", name, models.MaxSessionName); err != nil {
		return err
	}
	res, err := s.db.NewUpdate().Model((*models.Session)(nil)).
		Set("name = ?", name).Set("updated_at = ?", s.now().UTC()).
		Where("id = ?", sid).Where("(tenant_id = ? OR tenant_id IS NULL)", s.userID).Where("deleted_at IS NULL").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("rename session %s: %w", sid, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("rename session %s: %w", sid, ErrNotFound)
	}
	return nil
}

// BestEffort wraps a store for callers that must not break a stream (SPEC
// §8): errors are logged and the peer's fallback is returned instead.
type BestEffort struct {
	Store SessionStore
	Log   *slog.Logger // nil = slog.Default()
}

func (b BestEffort) log() *slog.Logger {
	if b.Log != nil {
		return b.Log
	}
	return slog.Default()
}

// StoreMessages stores and returns msgs as given; failures are logged.
func (b BestEffort) StoreMessages(ctx context.Context, sessionKey string, msgs []models.HistoryMessage, userID string) []models.HistoryMessage {
	if _, err := b.Store.StoreMessages(ctx, sessionKey, msgs, userID); err != nil {
		b.log().Error("remstore: store failed", "session", sessionKey, "messages", len(msgs), "err", err)
	}
	return msgs
}

// Load returns the history, or an empty list when loading fails.
func (b BestEffort) Load(ctx context.Context, sessionKey string, o LoadOptions) []models.HistoryMessage {
	out, err := b.Store.Load(ctx, sessionKey, o)
	if err != nil {
		b.log().Error("remstore: load failed", "session", sessionKey, "err", err)
		return []models.HistoryMessage{}
	}
	return out
}

// EnsureSession creates the session, ignoring failures.
func (b BestEffort) EnsureSession(ctx context.Context, sessionKey, userID string) {
	if _, err := b.Store.EnsureSession(ctx, sessionKey, userID); err != nil {
		b.log().Warn("remstore: ensure session failed", "session", sessionKey, "err", err)
	}
}

// Lookup returns the full text and whether it was found; errors are logged.
func (b BestEffort) Lookup(ctx context.Context, key string) (string, bool) {
	s, err := b.Store.Lookup(ctx, key)
	if err != nil && !errors.Is(err, ErrNotFound) {
		b.log().Error("remstore: lookup failed", "key", key, "err", err)
	}
	return s, err == nil
}

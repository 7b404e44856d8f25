package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	gojson "github.com/goccy/go-json"
	"io"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// The JSON Lines export format: a "session" record before the "message"
// records of that session, every column of each row, timestamps in UTC with
// microseconds. It round-trips losslessly between PostgreSQL and SQLite.

// SessionRecord is one sessions row in an export.
type SessionRecord struct {
	Kind        string          `json:"kind"` // "session"
	ID          uuid.UUID       `json:"id"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	AgentName   *string         `json:"agent_name"`
	Status      string          `json:"status"`
	GraphEdges  models.JSONList `json:"graph_edges"`
	Metadata    models.JSONMap  `json:"metadata"`
	Tags        []string        `json:"tags"`
	UserID      *string         `json:"user_id"`
	TenantID    *string         `json:"tenant_id"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	DeletedAt   *string         `json:"deleted_at"`
}

// MessageRecord is one messages row in an export.
type MessageRecord struct {
	Kind       string          `json:"kind"` // "message"
	ID         uuid.UUID       `json:"id"`
	SessionID  uuid.UUID       `json:"session_id"`
	Role       models.Role     `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  models.NullJSON `json:"tool_calls"`
	GraphEdges models.JSONList `json:"graph_edges"`
	Metadata   models.JSONMap  `json:"metadata"`
	Tags       []string        `json:"tags"`
	TraceID    *string         `json:"trace_id"`
	SpanID     *string         `json:"span_id"`
	UserID     *string         `json:"user_id"`
	TenantID   *string         `json:"tenant_id"`
	CreatedAt  string          `json:"created_at"`
	UpdatedAt  string          `json:"updated_at"`
	DeletedAt  *string         `json:"deleted_at"`
}

const exportTime = "2006-01-02T15:04:05.000000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(exportTime) }

func fmtTimePtr(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return models.Ptr(fmtTime(*t))
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, fmt.Errorf("field %q: %w", field, err)
	}
	return t.UTC(), nil
}

// ExportOptions selects what Export writes.
type ExportOptions struct {
	// SessionID limits the export to one session ("" = every session).
	SessionID string
	// TenantID limits it to one tenant: the sessions it owns and its
	// messages in them ("" = every tenant, an operator's export). A session
	// key that is not a UUID maps to a session with this tenant
	// (sessionstore.SessionUUID); another tenant's session is not found.
	TenantID string
}

// Export writes sessions and their messages as JSON Lines, in (created_at, id)
// order, and returns the number of messages written. Only sessions holding a
// selected message are written; NULL JSON and array columns are written as
// their column defaults ({} and []), which is what importing them stores.
func Export(ctx context.Context, db *bun.DB, w io.Writer, o ExportOptions) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	sq := db.NewSelect().Model((*models.Session)(nil)).OrderExpr("created_at, id")
	mfilter := func(q *bun.SelectQuery) *bun.SelectQuery {
		if o.TenantID != "" {
			q = q.Where("tenant_id = ?", o.TenantID)
		}
		return q
	}
	if o.TenantID != "" {
		sq = sq.Where("tenant_id = ?", o.TenantID)
	}
	var sid uuid.UUID
	if o.SessionID != "" {
		var err error
		if sid, err = sessionstore.SessionUUID(o.TenantID, o.SessionID); err != nil {
			return 0, err
		}
		sq = sq.Where("id = ?", sid)
	}
	sub := mfilter(db.NewSelect().Model((*models.Message)(nil)).Column("session_id"))
	var sessions []models.Session
	if err := sq.Where("id IN (?)", sub).Scan(ctx, &sessions); err != nil {
		return 0, fmt.Errorf("export sessions: %w", err)
	}
	if o.SessionID != "" && len(sessions) == 0 {
		return 0, fmt.Errorf("export session %s: %w", sid, sessionstore.ErrNotFound)
	}
	n := 0
	for _, s := range sessions {
		rec := SessionRecord{Kind: "session", ID: s.ID, Name: s.Name, Description: s.Description, AgentName: s.AgentName,
			Status: s.Status, GraphEdges: orList(s.GraphEdges), Metadata: orMap(s.Metadata), Tags: orTags(s.Tags),
			UserID: s.UserID, TenantID: s.TenantID, CreatedAt: fmtTime(s.CreatedAt), UpdatedAt: fmtTime(s.UpdatedAt), DeletedAt: fmtTimePtr(s.DeletedAt)}
		if err := enc.Encode(rec); err != nil {
			return n, err
		}
		rows, err := mfilter(db.NewSelect().Model((*models.Message)(nil)).Where("session_id = ?", s.ID)).
			OrderExpr("created_at, id").Rows(ctx)
		if err != nil {
			return n, fmt.Errorf("export messages: %w", err)
		}
		for rows.Next() {
			var m models.Message
			if err := db.ScanRow(ctx, rows, &m); err != nil {
				rows.Close()
				return n, fmt.Errorf("export messages: %w", err)
			}
			mr := MessageRecord{Kind: "message", ID: m.ID, SessionID: m.SessionID, Role: m.Role, Content: m.Content,
				ToolCalls: m.ToolCalls, GraphEdges: orList(m.GraphEdges), Metadata: orMap(m.Metadata), Tags: orTags(m.Tags),
				TraceID: m.TraceID, SpanID: m.SpanID, UserID: m.UserID, TenantID: m.TenantID,
				CreatedAt: fmtTime(m.CreatedAt), UpdatedAt: fmtTime(m.UpdatedAt), DeletedAt: fmtTimePtr(m.DeletedAt)}
			if err := enc.Encode(mr); err != nil {
				rows.Close()
				return n, err
			}
			n++
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return n, fmt.Errorf("export messages: %w", err)
		}
	}
	return n, bw.Flush()
}

func orList(l models.JSONList) models.JSONList {
	if l == nil {
		return models.JSONList{}
	}
	return l
}

func orMap(m models.JSONMap) models.JSONMap {
	if m == nil {
		return models.JSONMap{}
	}
	return m
}

func orTags(t models.StringArray) []string {
	if t == nil {
		return []string{}
	}
	return t
}

// ImportOptions controls Import.
type ImportOptions struct {
	// BatchSize is how many records go in one transaction (default 5000).
	BatchSize int
	// Progress, when set, is called after each batch with the bytes read so far.
	Progress func(bytesRead int64)
}

// ImportStats says what an import did.
type ImportStats struct {
	Sessions, Messages int // records read
	Inserted           int // messages written
	Skipped            int // messages already present (same id)
}

// Import reads an export and writes it in batches, each its own transaction.
// Rows whose id exists are skipped, so an interrupted import can be run again
// and ends with every message exactly once. On PostgreSQL each batch of
// messages goes into the table with COPY. Decoding the next batch overlaps
// writing this one; a bad record stops the import after the batches before
// it are written, as if they had been imported alone.
func Import(ctx context.Context, db *bun.DB, r io.Reader, o ImportOptions) (ImportStats, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 5000
	}
	var st ImportStats
	// A row is "already there" when its primary key is: (id), or
	// (session_id, id) once the tables are distributed on Citus, where the
	// probe then reads only the batch's sessions' shards.
	scoped := false
	if repository.IsPostgres(db) {
		pk, err := repository.PrimaryKey(ctx, db, "messages")
		if err != nil {
			return st, err
		}
		scoped = len(pk) == 2 && pk[0] == "session_id"
	}
	// Decoding costs about as much CPU as the database spends writing, so
	// the two run side by side: one batch decoded ahead, no more.
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	batches := make(chan importBatchIn, 1)
	var read ImportStats
	var decodeErr error
	go func() {
		defer close(batches)
		read, decodeErr = decodeImport(dctx, r, o.BatchSize, batches)
	}()
	var writeErr error
	for b := range batches {
		if writeErr != nil {
			continue // the decoder stops at its next batch; drain what it sent
		}
		ins, err := importBatch(ctx, db, b.sessions, b.msgs, scoped)
		if err != nil {
			writeErr = err
			stop()
			continue
		}
		st.Inserted += ins
		st.Skipped += len(b.msgs) - ins
		if o.Progress != nil {
			o.Progress(b.read)
		}
	}
	st.Sessions, st.Messages = read.Sessions, read.Messages
	if writeErr != nil {
		return st, writeErr
	}
	return st, decodeErr
}

// importBatchIn is one batch as decoded, with the bytes read up to its end.
type importBatchIn struct {
	sessions []*models.Session
	msgs     []importMsg
	read     int64
}

// decodeImport reads records and sends them in batches of size, the last one
// short; it counts the records it read and stops at the first bad one (the
// partial batch before it is not sent) or when ctx ends.
func decodeImport(ctx context.Context, r io.Reader, size int, out chan<- importBatchIn) (ImportStats, error) {
	var st ImportStats
	cr := &countingReader{r: r}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 1<<20), sessionstore.MaxContentBytes*2)
	var b importBatchIn
	send := func() error {
		if len(b.sessions) == 0 && len(b.msgs) == 0 {
			return nil
		}
		b.read = cr.n
		select {
		case out <- b:
			b = importBatchIn{}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		bad := func(err error) error {
			return &models.FieldError{Index: -1, Field: fmt.Sprintf("line %d", line), Reason: err.Error()}
		}
		var rec importRecord
		if err := decodeRecord(raw, &rec); err != nil {
			return st, bad(err)
		}
		switch rec.Kind {
		case "session":
			s, err := rec.session()
			if err != nil {
				return st, bad(err)
			}
			b.sessions = append(b.sessions, s)
			st.Sessions++
		case "message":
			m, err := rec.message()
			if err != nil {
				return st, bad(err)
			}
			b.msgs = append(b.msgs, m)
			st.Messages++
		default:
			return st, bad(fmt.Errorf("unknown kind %q", rec.Kind))
		}
		if len(b.sessions)+len(b.msgs) >= size {
			if err := send(); err != nil {
				return st, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return st, fmt.Errorf("read import: %w", err)
	}
	return st, send()
}

// decodeRecord decodes one line of an export. goccy/go-json decodes the
// records six times faster than encoding/json (1.1 against 7.3 µs for a
// typical message), which was most of an import's CPU; a record it fails on,
// or would panic on, is a malformed line like any other.
func decodeRecord(raw []byte, rec *importRecord) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("malformed JSON: %v", p)
		}
	}()
	if err := gojson.Unmarshal(raw, rec); err != nil {
		return fmt.Errorf("malformed JSON: %w", err)
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// importRecord is either record kind, decoded once; the JSON columns stay
// raw so they are written as they were exported.
type importRecord struct {
	Kind        string          `json:"kind"`
	ID          uuid.UUID       `json:"id"`
	SessionID   uuid.UUID       `json:"session_id"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	AgentName   *string         `json:"agent_name"`
	Status      string          `json:"status"`
	Role        models.Role     `json:"role"`
	Content     string          `json:"content"`
	ToolCalls   json.RawMessage `json:"tool_calls"`
	GraphEdges  json.RawMessage `json:"graph_edges"` // kept raw: PostgreSQL's COPY takes the text as it is
	Metadata    json.RawMessage `json:"metadata"`
	Tags        []string        `json:"tags"`
	TraceID     *string         `json:"trace_id"`
	SpanID      *string         `json:"span_id"`
	UserID      *string         `json:"user_id"`
	TenantID    *string         `json:"tenant_id"`
	CreatedAt   string          `json:"created_at"`
	UpdatedAt   string          `json:"updated_at"`
	DeletedAt   *string         `json:"deleted_at"`
}

// importMsg is a message record ready for either database: the row, and its
// JSON columns as the record gave them (decoded only for SQLite, whose bun
// insert needs the values; decoding them cost most of an import's time).
type importMsg struct {
	m           *models.Message
	meta, edges json.RawMessage
}

// rawJSON checks a raw JSON column: null or absent is its default, anything
// else must be a JSON value of the right kind that PostgreSQL stores.
func rawJSON(raw json.RawMessage, kind byte, def, field string) (json.RawMessage, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(def), nil
	}
	if t[0] != kind {
		return nil, fmt.Errorf("field %q: must be a JSON %s", field, map[byte]string{'{': "object", '[': "array"}[kind])
	}
	if reason := models.CheckJSONValue(t); reason != "" {
		return nil, fmt.Errorf("field %q: %s", field, reason)
	}
	return bytes.Clone(t), nil
}

func (r *importRecord) times() (created, updated time.Time, deleted *time.Time, err error) {
	if created, err = parseTime("created_at", r.CreatedAt); err != nil {
		return
	}
	if updated, err = parseTime("updated_at", r.UpdatedAt); err != nil {
		return
	}
	if r.DeletedAt != nil {
		var t time.Time
		if t, err = parseTime("deleted_at", *r.DeletedAt); err != nil {
			return
		}
		deleted = &t
	}
	return
}

func (r *importRecord) session() (*models.Session, error) {
	c, u, d, err := r.times()
	if err != nil {
		return nil, err
	}
	s := &models.Session{ID: r.ID, Name: r.Name, Description: r.Description, AgentName: r.AgentName, Status: r.Status,
		Tags: r.Tags, UserID: r.UserID, TenantID: r.TenantID, CreatedAt: c, UpdatedAt: u, DeletedAt: d}
	for _, col := range []struct {
		raw   json.RawMessage
		kind  byte
		def   string
		field string
		into  interface{ Scan(any) error }
	}{{r.Metadata, '{', "{}", "metadata", &s.Metadata}, {r.GraphEdges, '[', "[]", "graph_edges", &s.GraphEdges}} {
		v, err := rawJSON(col.raw, col.kind, col.def, col.field)
		if err != nil {
			return nil, err
		}
		if err := col.into.Scan([]byte(v)); err != nil {
			return nil, err
		}
	}
	s.FillDefaults() // the PostgreSQL path renders its INSERT without bun's hooks
	return s, nil
}

func (r *importRecord) message() (importMsg, error) {
	if r.ID == uuid.Nil || r.SessionID == uuid.Nil {
		return importMsg{}, errors.New("id and session_id are required")
	}
	if err := sessionstore.CheckText(-1, "content", r.Content, 0); err != nil {
		return importMsg{}, err
	}
	c, u, d, err := r.times()
	if err != nil {
		return importMsg{}, err
	}
	meta, err := rawJSON(r.Metadata, '{', "{}", "metadata")
	if err != nil {
		return importMsg{}, err
	}
	edges, err := rawJSON(r.GraphEdges, '[', "[]", "graph_edges")
	if err != nil {
		return importMsg{}, err
	}
	m := &models.Message{ID: r.ID, SessionID: r.SessionID, Role: r.Role, Content: r.Content,
		Tags: r.Tags, TraceID: r.TraceID, SpanID: r.SpanID,
		UserID: r.UserID, TenantID: r.TenantID, CreatedAt: c, UpdatedAt: u, DeletedAt: d}
	if t := bytes.TrimSpace(r.ToolCalls); len(t) > 0 && string(t) != "null" {
		if reason := models.CheckJSONValue(t); reason != "" {
			return importMsg{}, fmt.Errorf("field %q: %s", "tool_calls", reason)
		}
		m.ToolCalls = models.NullJSON(bytes.Clone(t))
	}
	if m.Tags == nil {
		m.Tags = models.StringArray{}
	}
	return importMsg{m: m, meta: meta, edges: edges}, nil
}

// importBatch writes one batch in a transaction and returns how many
// messages were new.
func importBatch(ctx context.Context, db *bun.DB, sessions []*models.Session, batch []importMsg, scoped bool) (int, error) {
	if repository.IsPostgres(db) {
		return importBatchPG(ctx, db, sessions, batch, scoped)
	}
	msgs := make([]*models.Message, len(batch))
	for i, im := range batch {
		msgs[i] = im.m
		if err := msgs[i].Metadata.Scan([]byte(im.meta)); err != nil {
			return 0, err
		}
		if err := msgs[i].GraphEdges.Scan([]byte(im.edges)); err != nil {
			return 0, err
		}
	}
	inserted := 0
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if len(sessions) > 0 {
			if _, err := tx.NewInsert().Model(&sessions).On("CONFLICT (id) DO NOTHING").Exec(ctx); err != nil {
				return fmt.Errorf("import sessions: %w", err)
			}
		}
		if len(msgs) == 0 {
			return nil
		}
		res, err := tx.NewInsert().Model(&msgs).On("CONFLICT (id) DO NOTHING").Exec(ctx)
		if err != nil {
			return fmt.Errorf("import messages: %w", err)
		}
		n, _ := res.RowsAffected()
		inserted = int(n)
		return nil
	})
	return inserted, err
}

// CopyColumns are the messages columns an import writes, in the order its
// COPY rows hold them.
var CopyColumns = []string{"id", "session_id", "role", "content", "tool_calls", "graph_edges", "metadata", "tags",
	"trace_id", "span_id", "user_id", "tenant_id", "created_at", "updated_at", "deleted_at"}

// importBatchPG runs one batch on a single pgx connection: sessions inserted,
// messages COPYed into a temporary table and inserted from it, skipping ids
// that exist. database/sql's transactions do not expose their connection, so
// the transaction is pgx's own.
func importBatchPG(ctx context.Context, db *bun.DB, sessions []*models.Session, batch []importMsg, scoped bool) (int, error) {
	var sessSQL string
	if len(sessions) > 0 {
		sessSQL = db.NewInsert().Model(&sessions).On("CONFLICT (id) DO NOTHING").String()
	}
	rows := make([][]any, len(batch))
	msgs := make([]*models.Message, len(batch))
	for i, im := range batch {
		m := im.m
		msgs[i] = m
		meta, edges := string(im.meta), string(im.edges)
		var toolCalls any
		if m.ToolCalls != nil {
			toolCalls = string(m.ToolCalls)
		}
		tags := []string(m.Tags)
		if tags == nil {
			tags = []string{}
		}
		// uuid as [16]byte: pgx encodes it directly; a string would be
		// parsed back into a UUID row by row.
		rows[i] = []any{[16]byte(m.ID), [16]byte(m.SessionID), string(m.Role), m.Content, toolCalls, edges, meta, tags,
			m.TraceID, m.SpanID, m.UserID, m.TenantID, m.CreatedAt, m.UpdatedAt, m.DeletedAt}
	}
	conn, err := db.DB.Conn(ctx)
	if err != nil {
		return 0, fmt.Errorf("import: %w", err)
	}
	defer conn.Close()
	var inserted int64
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("not a pgx connection: %T", dc)
		}
		return pgx.BeginFunc(ctx, sc.Conn(), func(tx pgx.Tx) error {
			if sessSQL != "" {
				if _, err := tx.Exec(ctx, sessSQL); err != nil {
					return fmt.Errorf("import sessions: %w", err)
				}
			}
			if len(rows) == 0 {
				return nil
			}
			// A fresh batch goes straight into the table with COPY. Where
			// the server refuses it (an id already there: a resumed import;
			// Citus reports that as XX000, not 23505), the batch is copied
			// again without the rows the table holds, and a second refusal
			// is the answer. Probing first on every batch cost a sixth of an
			// import.
			n, err := copyRows(ctx, tx, rows)
			if refused(err) {
				var fresh [][]any
				if fresh, err = withoutExisting(ctx, tx, msgs, rows, scoped); err == nil {
					n, err = copyRows(ctx, tx, fresh)
				}
			}
			if err != nil {
				return fmt.Errorf("import: %w", err)
			}
			inserted = n
			return nil
		})
	})
	return int(inserted), err
}

// copyRows COPYs rows into messages under a savepoint, so a failed copy
// leaves the batch's transaction usable.
func copyRows(ctx context.Context, tx pgx.Tx, rows [][]any) (int64, error) {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return 0, err
	}
	n, err := sp.CopyFrom(ctx, pgx.Identifier{"messages"}, CopyColumns, pgx.CopyFromRows(rows))
	if err != nil {
		_ = sp.Rollback(ctx)
		return 0, fmt.Errorf("copy: %w", err)
	}
	return n, sp.Commit(ctx)
}

// withoutExisting drops the rows whose id the table already holds (within
// the batch's sessions once the tables are distributed).
func withoutExisting(ctx context.Context, tx pgx.Tx, msgs []*models.Message, rows [][]any, scoped bool) ([][]any, error) {
	// As text: the connection speaks the simple protocol (see repository.Open).
	ids := make([]string, len(msgs))
	var sids []string
	seen := map[uuid.UUID]bool{}
	for i, m := range msgs {
		ids[i] = m.ID.String()
		if !seen[m.SessionID] {
			seen[m.SessionID] = true
			sids = append(sids, m.SessionID.String())
		}
	}
	probe, args := "SELECT id FROM messages WHERE id = ANY($1::uuid[])", []any{ids}
	if scoped {
		probe, args = probe+" AND session_id = ANY($2::uuid[])", append(args, sids)
	}
	rs, err := tx.Query(ctx, probe, args...)
	if err != nil {
		return nil, fmt.Errorf("check ids: %w", err)
	}
	have, err := pgx.CollectRows(rs, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("check ids: %w", err)
	}
	there := make(map[uuid.UUID]bool, len(have))
	for _, id := range have {
		there[id] = true
	}
	var fresh [][]any
	for i, m := range msgs {
		if !there[m.ID] {
			fresh = append(fresh, rows[i])
		}
	}
	return fresh, nil
}

// refused is an error the server answered with (not a lost connection).
func refused(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

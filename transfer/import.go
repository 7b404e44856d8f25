package transfer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	gojson "github.com/goccy/go-json"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/sessionstore"
)

// ImportOptions controls Import.
type ImportOptions struct {
	// BatchSize is how many records go in one transaction (default 5000).
	BatchSize int
	// Progress, when set, is called after each batch with the bytes read so far.
	Progress func(bytesRead int64)
	// Tenant is the tenant the import acts for: a row of any other tenant,
	// or a message into a session of another tenant, is refused. Empty
	// (with AllTenants) takes every tenant's rows, as an export with
	// --all-tenants wrote them.
	Tenant     string
	AllTenants bool
	// Atomic writes the whole file in one transaction: a bad line leaves
	// the database as it was. Without it each batch commits on its own and
	// a bad line stops the import after the batches before it.
	Atomic bool
	// AnyRole restores message rows whatever their role, as the Python service wrote
	// them (they load unchanged). Without it a role outside the Python service's roles is
	// refused, as every remstore write path refuses it: pydantic-ai history
	// would leave such a row out.
	AnyRole bool
	// Limits are the per-user limits (sessionstore.Limits), held by each
	// batch as a store holds them: a batch that would give a tenant more
	// sessions, or a session more of a tenant's messages, than they allow
	// is refused (a *sessionstore.LimitError) and writes nothing. They hold
	// for every tenant an import writes, with AllTenants too. Zero: none.
	Limits sessionstore.Limits
}

// ImportStats says what an import did.
type ImportStats struct {
	Sessions, Messages int // records read
	Inserted           int // messages written
	Skipped            int // messages already present (same id)
	// CommittedLines is the last line of the last batch committed: after a
	// failure without Atomic, what is in the database (0 when nothing is).
	CommittedLines int
}

// Import reads an export and writes it in batches, each its own transaction.
// Rows whose id exists are skipped, so an interrupted import can be run again
// and ends with every message exactly once. On PostgreSQL each batch of
// messages goes into the table with COPY. Decoding the next batch overlaps
// writing this one; a bad record stops the import after the batches before
// it are written, as if they had been imported alone.
func Import(ctx context.Context, db *repository.DB, r io.Reader, o ImportOptions) (ImportStats, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = 5000
	}
	var st ImportStats
	if !o.AllTenants {
		if err := models.CheckText(-1, "tenant", o.Tenant, models.MaxIDLen); err != nil || o.Tenant == "" {
			return st, &models.FieldError{Index: -1, Field: "tenant", Reason: "an import acts for one tenant (or for all)"}
		}
	}
	// A row is "already there" when its primary key is: (id), or
	// (session_id, id) once the tables are distributed on Citus, where the
	// probe then reads only the batch's sessions' shards.
	scoped := false
	if db.Postgres() {
		pk, err := repository.PrimaryKey(ctx, db, "messages")
		if err != nil {
			return st, err
		}
		scoped = len(pk) == 2 && pk[0] == "session_id"
	}
	w, err := newWriter(ctx, db, scoped, o.Atomic, o.Limits)
	if err != nil {
		return st, err
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
		read, decodeErr = decodeImport(dctx, r, o, batches)
	}()
	owners := sessionOwners{}
	var writeErr error
	last := 0
	for b := range batches {
		if writeErr != nil {
			continue // the decoder stops at its next batch; drain what it sent
		}
		ins, err := func() (int, error) {
			if err := owners.check(ctx, w.reader(), b, o); err != nil {
				return 0, err
			}
			return w.write(ctx, b)
		}()
		if err != nil {
			writeErr = err
			stop()
			continue
		}
		st.Inserted += ins
		st.Skipped += len(b.msgs) - ins
		if last = b.lastLine; !o.Atomic {
			st.CommittedLines = last
		}
		if o.Progress != nil {
			o.Progress(b.read)
		}
	}
	st.Sessions, st.Messages = read.Sessions, read.Messages
	err = writeErr
	if err == nil {
		err = decodeErr
	}
	if ferr := w.finish(ctx, err == nil); err == nil && ferr != nil {
		err = ferr
	}
	if err != nil && o.Atomic {
		st.Inserted, st.Skipped = 0, 0
	}
	if err == nil && o.Atomic {
		st.CommittedLines = last
	}
	return st, err
}

// sessionOwners knows the tenant of every session the import has met (in
// the file or in the database), to refuse a message into another tenant's
// session before anything of its batch is written.
type sessionOwners map[uuid.UUID]*string

func (so sessionOwners) check(ctx context.Context, db bun.IDB, b importBatchIn, o ImportOptions) error {
	var unknown []uuid.UUID
	for _, s := range b.sessions {
		if _, ok := so[s.ID]; !ok {
			unknown = append(unknown, s.ID)
		}
	}
	for _, m := range b.msgs {
		if _, ok := so[m.m.SessionID]; !ok {
			unknown = append(unknown, m.m.SessionID)
		}
	}
	if len(unknown) > 0 {
		var rows []struct {
			ID       uuid.UUID `bun:"id"`
			TenantID *string   `bun:"tenant_id"`
		}
		if err := db.NewSelect().Table("sessions").Column("id", "tenant_id").Where("id IN (?)", bun.List(unknown)).Scan(ctx, &rows); err != nil {
			return fmt.Errorf("import: read the batch's sessions: %w", err)
		}
		for _, r := range rows {
			so[r.ID] = r.TenantID
		}
	}
	tenantOf := func(p *string) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%q", *p)
	}
	for i, s := range b.sessions {
		owner, exists := so[s.ID]
		if exists && !o.AllTenants && tenantOf(owner) != tenantOf(s.TenantID) {
			return lineErr(b.sessionLines[i], "id", "session %s exists and belongs to another tenant", s.ID)
		}
		if !exists {
			so[s.ID] = s.TenantID
		}
	}
	for i, m := range b.msgs {
		owner, exists := so[m.m.SessionID]
		switch {
		case !exists:
			return lineErr(b.msgLines[i], "session_id", "no session %s in the file before this line or in the database", m.m.SessionID)
		case !o.AllTenants && tenantOf(owner) != tenantOf(&o.Tenant):
			return lineErr(b.msgLines[i], "session_id", "session %s belongs to another tenant", m.m.SessionID)
		}
	}
	return nil
}

func lineErr(line int, field, format string, a ...any) error {
	return &models.FieldError{Index: -1, Field: fmt.Sprintf("line %d", line), Reason: fmt.Sprintf("field %q: ", field) + fmt.Sprintf(format, a...)}
}

// importBatchIn is one batch as decoded, with the bytes read up to its end.
type importBatchIn struct {
	sessions []*table.Session
	msgs     []importMsg
	read     int64
	// the lines each record came from, and the batch's last line
	sessionLines, msgLines []int
	firstLine, lastLine    int
}

// decodeImport reads records and sends them in batches of o.BatchSize, the
// last one short; it counts the records it read and stops at the first bad
// one (the partial batch before it is not sent) or when ctx ends. A record
// is checked as the store checks what it writes (the same limits and
// refusals), and refused when it belongs to another tenant than o.Tenant
// (unless o.AllTenants) or repeats an id of its batch.
func decodeImport(ctx context.Context, r io.Reader, o ImportOptions, out chan<- importBatchIn) (ImportStats, error) {
	var st ImportStats
	cr := &countingReader{r: r}
	sc := bufio.NewScanner(cr)
	sc.Buffer(make([]byte, 1<<20), sessionstore.MaxContentBytes*2)
	var b importBatchIn
	ids := map[uuid.UUID]int{} // the batch's message and session ids, by line
	send := func() error {
		if len(b.sessions) == 0 && len(b.msgs) == 0 {
			return nil
		}
		b.read = cr.n
		select {
		case out <- b:
			b = importBatchIn{}
			clear(ids)
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
		// What the decoder would change in silence: a lone surrogate made
		// U+FFFD, the last of a repeated key kept. (The JSON columns get
		// the full check in rawJSON; the whole line only when it has an
		// escape the cheap scan cannot judge: checking every line cost an
		// import 17%.)
		if needsFullCheck(raw) {
			if reason := models.CheckJSONValue(raw); reason != "" {
				return st, bad(errors.New(reason))
			}
		}
		if !o.AllTenants && (rec.TenantID == nil || *rec.TenantID != o.Tenant) {
			got := "null"
			if rec.TenantID != nil {
				got = fmt.Sprintf("%q", *rec.TenantID)
			}
			return st, bad(fmt.Errorf("field %q: %s, but this import acts for %q (give --all-tenants to import every tenant's rows)", "tenant_id", got, o.Tenant))
		}
		if prev, dup := ids[rec.ID]; dup && rec.ID != uuid.Nil {
			return st, bad(fmt.Errorf("field %q: the same id as line %d", "id", prev))
		}
		ids[rec.ID] = line
		if b.firstLine == 0 {
			b.firstLine = line
		}
		b.lastLine = line
		switch rec.Kind {
		case "session":
			s, err := rec.session()
			if err != nil {
				return st, bad(err)
			}
			b.sessions = append(b.sessions, s)
			b.sessionLines = append(b.sessionLines, line)
			st.Sessions++
		case "message":
			m, err := rec.message()
			if err != nil {
				return st, bad(err)
			}
			if !o.AnyRole {
				if err := models.CheckRole(-1, rec.Role); err != nil {
					return st, bad(fmt.Errorf("%w (--any-role restores it as it was written)", err))
				}
			}
			b.msgs = append(b.msgs, m)
			b.msgLines = append(b.msgLines, line)
			st.Messages++
		default:
			return st, bad(fmt.Errorf("unknown kind %q", rec.Kind))
		}
		if len(b.sessions)+len(b.msgs) >= o.BatchSize {
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

// needsFullCheck reports whether a record line may hold what the decoder
// changes in silence: a \u escape of a surrogate (d800-dfff) anywhere, or a
// top-level key that repeats (compared as written; a key with an escape
// sends the line to the full check, which compares decoded keys).
func needsFullCheck(raw []byte) bool {
	var keys [32][]byte
	nkeys, depth, inStr, esc, keyStart := 0, 0, false, false, -1
	expectKey := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case esc:
			esc = false
			if c == 'u' && i+1 < len(raw) && (raw[i+1] == 'd' || raw[i+1] == 'D') {
				return true
			}
			if keyStart >= 0 {
				return true // an escaped key
			}
		case inStr && c == '\\':
			esc = true
		case inStr && c == '"':
			inStr = false
			if keyStart >= 0 {
				k := raw[keyStart:i]
				for _, seen := range keys[:nkeys] {
					if bytes.Equal(seen, k) {
						return true
					}
				}
				if nkeys == len(keys) {
					return true
				}
				keys[nkeys] = k
				nkeys++
				keyStart = -1
			}
		case inStr:
		case c == '"':
			inStr = true
			if depth == 1 && expectKey {
				keyStart = i + 1
				expectKey = false
			}
		case c == '{' || c == '[':
			depth++
			expectKey = c == '{' && depth == 1
		case c == '}' || c == ']':
			depth--
		case c == ',' && depth == 1:
			expectKey = true
		}
	}
	return false
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
	m           *table.Message
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

// checkTexts applies the store's checks (msgcheck.CheckMessage for role
// and content, models.CheckText for the other text columns: valid
// UTF-8, no NUL, the store's lengths), so an import takes exactly what a
// store would, on every database.
func (r *importRecord) checkTexts() error {
	if err := msgcheck.CheckMessage(-1, string(r.Role), r.Content); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"name", r.Name, 0}, {"description", r.Description, 0},
		{"agent_name", r.AgentName, models.MaxAgentName}, {"status", &r.Status, models.MaxRoleLen},
		{"trace_id", r.TraceID, models.MaxIDLen}, {"span_id", r.SpanID, models.MaxIDLen},
		{"user_id", r.UserID, models.MaxIDLen}, {"tenant_id", r.TenantID, models.MaxIDLen}} {
		if f.v == nil {
			continue
		}
		if err := models.CheckText(-1, f.name, *f.v, f.max); err != nil {
			return err
		}
	}
	for _, t := range r.Tags {
		if err := models.CheckText(-1, "tags", t, 0); err != nil {
			return err
		}
	}
	return nil
}

func (r *importRecord) session() (*table.Session, error) {
	if r.ID == uuid.Nil {
		return nil, errors.New("id is required")
	}
	if err := r.checkTexts(); err != nil {
		return nil, err
	}
	c, u, d, err := r.times()
	if err != nil {
		return nil, err
	}
	s := &table.Session{ID: r.ID, Name: r.Name, Description: r.Description, AgentName: r.AgentName, Status: r.Status,
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
	if err := r.checkTexts(); err != nil {
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
	m := &table.Message{ID: r.ID, SessionID: r.SessionID, Role: r.Role, Content: r.Content,
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

package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/transfer"
)

// The floors pass uuids to pgx as [16]byte, as remstore does (pgxArgs): as
// a driver.Valuer a uuid.UUID costs pgx a text round trip per value.

// floorStore is a store done by hand in native pgx: one pipelined batch
// (BEGIN, the session lock, the session upsert, one INSERT ... SELECT whose
// positions come from a subquery, COMMIT) with $n parameters: one round trip.
func floorStore(ctx context.Context, c *pgx.Conn, sid uuid.UUID, msgs []models.HistoryMessage, seq int) error {
	n := len(msgs)
	ids := make([][16]byte, n)
	roles := make([]string, n)
	contents := make([]string, n)
	metas := make([]string, n)
	for i, m := range msgs {
		ids[i], roles[i], contents[i] = uuid.New(), string(m.Role), m.Content
		meta := map[string]any{"timestamp": m.Timestamp}
		if m.Role == "tool" {
			meta["tool_call_id"], meta["tool_name"] = m.ToolCallID, m.ToolName
			if m.ToolArguments != nil {
				meta["tool_arguments"] = json.RawMessage(m.ToolArguments)
			}
		}
		b, _ := json.Marshal(meta)
		metas[i] = string(b)
	}
	lock := int64(binary.BigEndian.Uint64(sid[:8]) ^ binary.BigEndian.Uint64(sid[8:]))
	now := time.Now().UTC()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue("SELECT pg_advisory_xact_lock($1)", lock)
	b.Queue(`INSERT INTO sessions (id, name, status, user_id, tenant_id, created_at, updated_at)
		VALUES ($1, $2, 'active', 'bench', 'bench', $3, $3) ON CONFLICT (id) DO UPDATE SET updated_at = EXCLUDED.updated_at`,
		[16]byte(sid), sid.String(), now)
	b.Queue(`INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id, created_at, updated_at)
		SELECT u.id, $1, u.role, u.content,
		       u.meta::jsonb || jsonb_build_object('message_index', p.n + u.o - 1, 'entity_key', 'session-' || $1::text || '-msg-' || (p.n + u.o - 1)),
		       'bench', 'bench', greatest($6::timestamptz, p.last + interval '1 microsecond') + (u.o - 1) * interval '1 microsecond', $6
		FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(id, role, content, meta, o),
		     (SELECT count(*) AS n, max(created_at) AS last FROM messages WHERE session_id = $1) p`,
		[16]byte(sid), ids, roles, contents, metas, now)
	b.Queue("COMMIT")
	br := c.SendBatch(ctx, b)
	for i := range b.Len() {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("floor store statement %d (run %d): %w", i, seq, err)
		}
	}
	return br.Close()
}

// floorLoad is the least work that returns what a plain load prints: one
// SELECT of those columns (role, content, time, and a tool row's three
// fields read out of metadata on the server), the live rows in load order,
// each value taken as the raw bytes pgx received (issue 45: the floor
// decoded every row's whole metadata into a map, work the load itself
// avoids, and flattered the ratio).
func floorLoad(ctx context.Context, c *pgx.Conn, sid uuid.UUID, want int) error {
	return floorRows(ctx, c, sid, want, "")
}

// floorSelect is the floors' load statement: the columns a plain load
// prints (role, content, time, a tool row's three fields read on the
// server), and extra ones when given, the live rows in load order.
func floorSelect(extra string) string {
	return `SELECT role, content, created_at,
		CASE WHEN role = 'tool' THEN metadata->>'tool_call_id' END,
		CASE WHEN role = 'tool' THEN metadata->>'tool_name' END,
		CASE WHEN role = 'tool' THEN metadata->'tool_arguments' END` + extra + `
		FROM messages WHERE session_id = $1 AND tenant_id = $2 AND deleted_at IS NULL ORDER BY created_at, id`
}

// floorRows reads the live rows' plain columns, and extra ones when given
// (floorExtrasLoad's), each value as the raw bytes pgx received.
func floorRows(ctx context.Context, c *pgx.Conn, sid uuid.UUID, want int, extra string) error {
	rows, err := c.Query(ctx, floorSelect(extra), [16]byte(sid), "bench")
	if err != nil {
		return err
	}
	defer rows.Close()
	n, size := 0, 0
	for rows.Next() {
		for _, v := range rows.RawValues() {
			size += len(v)
		}
		n++
	}
	if n != want || size == 0 {
		return fmt.Errorf("floor loaded %d of %d rows (%d bytes)", n, want, size)
	}
	return rows.Err()
}

// floorHistory is a load done by hand in native pgx that builds what a load
// returns: the same SELECT as floorLoad, each row scanned into a
// models.HistoryMessage (content and time as strings, a tool row's three
// fields), nothing compressed. Beside floorLoad, which keeps raw bytes, it
// says how much of a load's time is the history every caller needs.
func floorHistory(ctx context.Context, c *pgx.Conn, sid uuid.UUID, want int) error {
	rows, err := c.Query(ctx, floorSelect(""), [16]byte(sid), "bench")
	if err != nil {
		return err
	}
	defer rows.Close()
	h := make([]models.HistoryMessage, 0, 16)
	for rows.Next() {
		var (
			role, content string
			at            time.Time
			id, name      *string
			args          []byte
		)
		if err := rows.Scan(&role, &content, &at, &id, &name, &args); err != nil {
			return err
		}
		ts := models.FormatTimestamp(at)
		m := models.HistoryMessage{Role: models.Role(role), Content: content, Timestamp: &ts}
		if id != nil {
			m.ToolCallID = *id
		}
		if name != nil {
			m.ToolName = *name
		}
		if len(args) > 0 {
			m.ToolArguments = args
		}
		h = append(h, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(h) != want {
		return fmt.Errorf("floor loaded %d of %d rows", len(h), want)
	}
	return nil
}

// exportRows decodes an export's message records into COPY rows of
// transfer.CopyColumns, once and untimed: the floor is the database's share of an
// import, the same rows with nothing decoded while the clock runs.
func exportRows(data []byte) ([][]any, error) {
	var rows [][]any
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var r struct {
			Kind                 string
			Role, Content        string
			ToolCalls            json.RawMessage `json:"tool_calls"`
			GraphEdges           json.RawMessage `json:"graph_edges"`
			Metadata             json.RawMessage
			Tags                 []string
			TraceID              *string `json:"trace_id"`
			SpanID               *string `json:"span_id"`
			UserID               *string `json:"user_id"`
			TenantID             *string `json:"tenant_id"`
			CreatedAt, UpdatedAt time.Time
			DeletedAt            *time.Time `json:"deleted_at"`
		}
		if err := json.Unmarshal(line, &r); err != nil {
			return nil, err
		}
		if r.Kind != "message" {
			continue
		}
		var calls any
		if len(r.ToolCalls) > 0 && string(r.ToolCalls) != "null" {
			calls = string(r.ToolCalls)
		}
		if r.Tags == nil {
			r.Tags = []string{}
		}
		rows = append(rows, []any{nil, nil, r.Role, r.Content, calls, string(r.GraphEdges), string(r.Metadata), r.Tags,
			r.TraceID, r.SpanID, r.UserID, r.TenantID, r.CreatedAt, r.UpdatedAt, r.DeletedAt})
	}
	return rows, nil
}

// floorCopy COPYs the rows an import writes straight into the table, in one
// transaction, under fresh ids in a fresh session.
func floorCopy(ctx context.Context, c *pgx.Conn, rows [][]any) error {
	sid := uuid.New()
	if _, err := c.Exec(ctx, "INSERT INTO sessions (id, name) VALUES ($1, 'floor-copy')", sid); err != nil {
		return err
	}
	i := 0
	src := pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(rows) {
			return nil, nil
		}
		row := append([]any{[16]byte(uuid.New()), [16]byte(sid)}, rows[i][2:]...)
		i++
		return row, nil
	})
	_, err := c.CopyFrom(ctx, pgx.Identifier{"messages"}, transfer.CopyColumns(), src)
	return err
}

package transfer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
	"github.com/remstore/remstore/sessionstore"
)

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
func Export(ctx context.Context, db *repository.DB, w io.Writer, o ExportOptions) (int, error) {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	sq := db.NewSelect().Model((*table.Session)(nil)).OrderExpr("created_at, id")
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
	sub := mfilter(db.NewSelect().Model((*table.Message)(nil)).Column("session_id"))
	var sessions []table.Session
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
		rows, err := mfilter(db.NewSelect().Model((*table.Message)(nil)).Where("session_id = ?", s.ID)).
			OrderExpr("created_at, id").Rows(ctx)
		if err != nil {
			return n, fmt.Errorf("export messages: %w", err)
		}
		for rows.Next() {
			var m table.Message
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

package transfer

import (
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
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
	// Year 0 parses, and PostgreSQL would store it as 1 BC: refused, as the
	// store refuses it.
	if y := t.UTC().Year(); y < 1 || y > 9999 {
		return t, fmt.Errorf("field %q: year %d is outside 1 to 9999", field, y)
	}
	return t.UTC(), nil
}

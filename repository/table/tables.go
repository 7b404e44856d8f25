package table

import (
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
)

// Session is a row of the Python service's `sessions` table, column for column.
// Features the Python service lacks (lifecycle reasons, settings, forks) live in
// Metadata so the Python service keeps reading the table unchanged.
type Session struct {
	bun.BaseModel `bun:"table:sessions"`

	ID          uuid.UUID          `bun:"id,pk,type:uuid"`
	Name        *string            `bun:"name"`
	Description *string            `bun:"description"`
	AgentName   *string            `bun:"agent_name"`
	Status      string             `bun:"status"`
	GraphEdges  models.JSONList    `bun:"graph_edges,type:jsonb"`
	Metadata    models.JSONMap     `bun:"metadata,type:jsonb"`
	Tags        models.StringArray `bun:"tags,type:text[]"`
	UserID      *string            `bun:"user_id"`
	TenantID    *string            `bun:"tenant_id"`
	CreatedAt   time.Time          `bun:"created_at,type:timestamptz"`
	UpdatedAt   time.Time          `bun:"updated_at,type:timestamptz"`
	DeletedAt   *time.Time         `bun:"deleted_at,type:timestamptz"`
}

// Message is a row of the Python service's `messages` table, column for column. The
// Python service's optional `embedding VECTOR(1536)` column is deliberately not mapped:
// remstore neither reads nor writes it, so it works with or without it.
type Message struct {
	bun.BaseModel `bun:"table:messages"`

	ID         uuid.UUID          `bun:"id,pk,type:uuid"`
	SessionID  uuid.UUID          `bun:"session_id,type:uuid"`
	Role       models.Role        `bun:"role"`
	Content    string             `bun:"content"`
	ToolCalls  models.NullJSON    `bun:"tool_calls,type:jsonb"`
	GraphEdges models.JSONList    `bun:"graph_edges,type:jsonb"`
	Metadata   models.JSONMap     `bun:"metadata,type:jsonb"`
	Tags       models.StringArray `bun:"tags,type:text[]"`
	TraceID    *string            `bun:"trace_id"`
	SpanID     *string            `bun:"span_id"`
	UserID     *string            `bun:"user_id"`
	TenantID   *string            `bun:"tenant_id"`
	CreatedAt  time.Time          `bun:"created_at,type:timestamptz"`
	UpdatedAt  time.Time          `bun:"updated_at,type:timestamptz"`
	DeletedAt  *time.Time         `bun:"deleted_at,type:timestamptz"`
}

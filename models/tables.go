package models

import (
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// Session is a row of the peer's `sessions` table, column for column.
// Features the peer lacks (lifecycle reasons, settings, forks) live in
// Metadata so the peer keeps reading the table unchanged.
type Session struct {
	bun.BaseModel `bun:"table:sessions"`

	ID          uuid.UUID   `bun:"id,pk,type:uuid"`
	Name        *string     `bun:"name"`
	Description *string     `bun:"description"`
	AgentName   *string     `bun:"agent_name"`
	Status      string      `bun:"status"`
	GraphEdges  JSONList    `bun:"graph_edges,type:jsonb"`
	Metadata    JSONMap     `bun:"metadata,type:jsonb"`
	Tags        StringArray `bun:"tags,type:text[]"`
	UserID      *string     `bun:"user_id"`
	TenantID    *string     `bun:"tenant_id"`
	CreatedAt   time.Time   `bun:"created_at,type:timestamptz"`
	UpdatedAt   time.Time   `bun:"updated_at,type:timestamptz"`
	DeletedAt   *time.Time  `bun:"deleted_at,type:timestamptz"`
}

// Message is a row of the peer's `messages` table, column for column. The
// peer's optional `embedding VECTOR(1536)` column is deliberately not mapped:
// remstore neither reads nor writes it, so it works with or without it.
type Message struct {
	bun.BaseModel `bun:"table:messages"`

	ID         uuid.UUID   `bun:"id,pk,type:uuid"`
	SessionID  uuid.UUID   `bun:"session_id,type:uuid"`
	Role       Role        `bun:"role"`
	Content    string      `bun:"content"`
	ToolCalls  NullJSON    `bun:"tool_calls,type:jsonb"`
	GraphEdges JSONList    `bun:"graph_edges,type:jsonb"`
	Metadata   JSONMap     `bun:"metadata,type:jsonb"`
	Tags       StringArray `bun:"tags,type:text[]"`
	TraceID    *string     `bun:"trace_id"`
	SpanID     *string     `bun:"span_id"`
	UserID     *string     `bun:"user_id"`
	TenantID   *string     `bun:"tenant_id"`
	CreatedAt  time.Time   `bun:"created_at,type:timestamptz"`
	UpdatedAt  time.Time   `bun:"updated_at,type:timestamptz"`
	DeletedAt  *time.Time  `bun:"deleted_at,type:timestamptz"`
}

// Column limits of the peer's schema; input longer than these is rejected
// before anything is written.
const (
	MaxRoleLen     = 64
	MaxSessionName = 512
	MaxAgentName   = 256
	MaxIDLen       = 256 // user_id, tenant_id, trace_id, span_id
)

// Session statuses. The peer writes only StatusActive.
const (
	StatusActive    = "active"
	StatusCompleted = "completed"
	StatusCancelled = "cancelled"
	StatusError     = "error"
)

// Statuses are the session statuses, in the order of their lifecycle;
// anything else is bad input.
var statuses = []string{StatusActive, StatusCompleted, StatusCancelled, StatusError}

// Statuses are a session's statuses (a copy).
func Statuses() []string { return slices.Clone(statuses) }

// IsStatus says whether s is one of Statuses.
func IsStatus(s string) bool { return slices.Contains(statuses, s) }

// Ptr returns a pointer to v; handy for the nullable columns.
func Ptr[T any](v T) *T { return &v }

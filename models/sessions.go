package models

import (
	"time"

	"github.com/google/uuid"
)

// SessionInfo is a session as callers see it; nothing here loads messages.
type SessionInfo struct {
	ID        uuid.UUID      `json:"id"`
	Name      string         `json:"name"`
	AgentName string         `json:"agent_name,omitempty"`
	Status    string         `json:"status"`
	Settings  map[string]any `json:"settings"`
	Metadata  map[string]any `json:"metadata"`
	UserID    string         `json:"user_id,omitempty"`
	TenantID  string         `json:"tenant_id,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// ListResult is one page of sessions, newest first.
type ListResult struct {
	Sessions   []SessionInfo `json:"sessions"`
	Total      int           `json:"total"`
	Limit      int           `json:"limit"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

// SearchHit is one message found (or, for a search of agents, one session).
type SearchHit struct {
	SessionID   uuid.UUID `json:"session_id"`
	SessionName string    `json:"session_name"`
	AgentName   string    `json:"agent_name,omitempty"`
	Role        string    `json:"role,omitempty"`      // "" for a session hit
	Timestamp   string    `json:"timestamp,omitempty"` // the message's, as loads print it; "" for a session hit
	Index       int       `json:"index"`               // the message's position among the session's live messages (its place in a load); -1 for a session hit or a message removed since the search found it. Key finds it: lookup --index counts removed rows too
	Key         string    `json:"key,omitempty"`       // its REM LOOKUP key, if it has one
	ToolName    string    `json:"tool_name,omitempty"`
	Snippet     string    `json:"snippet,omitempty"` // the text around the first match
}

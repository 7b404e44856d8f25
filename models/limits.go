package models

import "slices"

// Column limits of the Python service's schema; input longer than these is rejected
// before anything is written.
const (
	MaxRoleLen     = 64
	MaxSessionName = 512
	MaxAgentName   = 256
	MaxIDLen       = 256 // user_id, tenant_id, trace_id, span_id
)

// Session statuses. The Python service writes only StatusActive.
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

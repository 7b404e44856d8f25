package models

import (
	"context"
	"time"

	"github.com/uptrace/bun"
)

// Zero timestamps are filled in Go rather than by column defaults: a
// multi-row INSERT cannot say DEFAULT on SQLite, and one clock keeps a row's
// created_at and updated_at equal on first write.
func fillTimes(created, updated *time.Time) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	if created.IsZero() {
		*created = now
	}
	if updated.IsZero() {
		*updated = *created
	}
}

var (
	_ bun.BeforeAppendModelHook = (*Session)(nil)
	_ bun.BeforeAppendModelHook = (*Message)(nil)
)

// BeforeAppendModel fills zero timestamps and the peer's default status.
func (s *Session) BeforeAppendModel(_ context.Context, q bun.Query) error {
	if _, ok := q.(*bun.InsertQuery); ok {
		fillTimes(&s.CreatedAt, &s.UpdatedAt)
		if s.Status == "" {
			s.Status = StatusActive
		}
	}
	return nil
}

// BeforeAppendModel fills zero timestamps.
func (m *Message) BeforeAppendModel(_ context.Context, q bun.Query) error {
	if _, ok := q.(*bun.InsertQuery); ok {
		fillTimes(&m.CreatedAt, &m.UpdatedAt)
	}
	return nil
}

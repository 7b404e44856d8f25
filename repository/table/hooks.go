package table

import (
	"context"
	"time"

	"github.com/remstore/remstore/models"
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

// The Python service validates every row of a session before it filters by tenant, and
// one row with a NULL tags, graph_edges or metadata empties the whole session
// for every reader. bun writes a nil slice or map as NULL, so every
// insert and update fills them with the column defaults here, in one place.
func fillDefaults(tags *models.StringArray, edges *models.JSONList, meta *models.JSONMap) {
	if *tags == nil {
		*tags = models.StringArray{}
	}
	if *edges == nil {
		*edges = models.JSONList{}
	}
	if *meta == nil {
		*meta = models.JSONMap{}
	}
}

func writes(q bun.Query) (insert, ok bool) {
	switch q.(type) {
	case *bun.InsertQuery:
		return true, true
	case *bun.UpdateQuery:
		return false, true
	}
	return false, false
}

// BeforeAppendModel fills zero timestamps, the Python service's default status and the
// JSON and array columns' defaults.
func (s *Session) BeforeAppendModel(_ context.Context, q bun.Query) error {
	insert, ok := writes(q)
	if !ok {
		return nil
	}
	if insert {
		fillTimes(&s.CreatedAt, &s.UpdatedAt)
	}
	s.FillDefaults()
	return nil
}

// FillDefaults sets the Python service's default status and the JSON and array
// columns' defaults where they are unset. The write hooks call it; so does
// code that renders an INSERT without running them (import's COPY path).
func (s *Session) FillDefaults() {
	if s.Status == "" {
		s.Status = models.StatusActive
	}
	fillDefaults(&s.Tags, &s.GraphEdges, &s.Metadata)
}

// FillDefaults sets the JSON and array columns' defaults where unset (see
// Session.FillDefaults).
func (m *Message) FillDefaults() { fillDefaults(&m.Tags, &m.GraphEdges, &m.Metadata) }

// BeforeAppendModel fills zero timestamps and the JSON and array columns'
// defaults.
func (m *Message) BeforeAppendModel(_ context.Context, q bun.Query) error {
	insert, ok := writes(q)
	if !ok {
		return nil
	}
	if insert {
		fillTimes(&m.CreatedAt, &m.UpdatedAt)
	}
	m.FillDefaults()
	return nil
}

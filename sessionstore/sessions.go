package sessionstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
)

// SessionInfo is models.SessionInfo.
type SessionInfo = models.SessionInfo

func infoOf(s *table.Session) SessionInfo {
	in := SessionInfo{ID: s.ID, Status: s.Status, Metadata: map[string]any(s.Metadata), CreatedAt: s.CreatedAt.UTC(), UpdatedAt: s.UpdatedAt.UTC()}
	if in.Metadata == nil {
		in.Metadata = map[string]any{}
	}
	in.Settings, _ = in.Metadata["settings"].(map[string]any)
	if in.Settings == nil {
		in.Settings = map[string]any{}
	}
	for dst, src := range map[*string]*string{&in.Name: s.Name, &in.AgentName: s.AgentName, &in.UserID: s.UserID, &in.TenantID: s.TenantID} {
		if src != nil {
			*dst = *src
		}
	}
	return in
}

// ListOptions filters ListSessions. The tenant is the store's.
type ListOptions struct {
	UserID        string
	AgentName     string
	Statuses      []string // any of; empty = all
	CreatedAfter  time.Time
	CreatedBefore time.Time
	UpdatedAfter  time.Time
	UpdatedBefore time.Time
	Limit         int    // default 20, at most 500
	Cursor        string // from the previous page's NextCursor
}

// ListResult is models.ListResult.
type ListResult = models.ListResult

// Listing limits.
const (
	DefaultListLimit = 20
	MaxListLimit     = 500
)

type cursor struct {
	CreatedAt time.Time `json:"c"`
	ID        uuid.UUID `json:"i"`
}

func encodeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	var c cursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return c, fieldErr(-1, "cursor", "not a cursor this store returned")
	}
	return c, nil
}

func (o *ListOptions) normalize() error {
	switch {
	case o.Limit == 0:
		o.Limit = DefaultListLimit
	case o.Limit < 0 || o.Limit > MaxListLimit:
		return fieldErr(-1, "limit", "must be between 1 and %d", MaxListLimit)
	}
	// Checked here, not by the database: bun inlines a value it cannot
	// encode (a NUL byte) as an error in the SQL, which came back as 503.
	if err := models.CheckText(-1, "owner", o.UserID, models.MaxIDLen); err != nil {
		return err
	}
	if err := models.CheckText(-1, "agent", o.AgentName, models.MaxAgentName); err != nil {
		return err
	}
	for _, st := range o.Statuses {
		if !models.IsStatus(st) {
			return fieldErr(-1, "status", "%q is not active, completed, cancelled or error", st)
		}
	}
	return nil
}

// owned limits a sessions query (alias "session") to the live sessions of
// the store's tenant: a session belongs to the tenant that created it (SPEC
// §2). Every session call goes through it, so another tenant's session is
// not found, whatever the call.
func (s *Store) owned(q *bun.SelectQuery) *bun.SelectQuery {
	return q.Where("session.deleted_at IS NULL").Where("session.tenant_id = ?", s.userID)
}

func (s *Store) getSession(ctx context.Context, db bun.IDB, sid uuid.UUID) (*table.Session, error) {
	rows, err := repository.New[table.Session](db).Find(ctx, repository.Query{
		Filters: []repository.Filter{{Column: "id", Value: sid}, {Column: "tenant_id", Value: s.userID}}, Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", sid, err)
	}
	if len(rows) == 0 {
		return nil, notFound(sid)
	}
	return &rows[0], nil
}

// GetSession returns the session and its history (as Load with o returns
// it). ErrNotFound for an unknown session or one the tenant cannot see.
func (s *Store) GetSession(ctx context.Context, sessionKey string, o LoadOptions) (SessionInfo, []models.HistoryMessage, error) {
	info, err := s.SessionInfo(ctx, sessionKey)
	if err != nil {
		return SessionInfo{}, nil, err
	}
	h, err := s.Load(ctx, sessionKey, o)
	return info, h, err
}

// SessionInfo returns the tenant's session without its messages: with
// LoadEach after it, what GetSession returns, streamed (memory flat however
// long the session).
func (s *Store) SessionInfo(ctx context.Context, sessionKey string) (SessionInfo, error) {
	if err := s.on(); err != nil {
		return SessionInfo{}, err
	}
	var sess *table.Session
	err := s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error {
		var err error
		sess, err = s.getSession(ctx, s.db, sid)
		return err
	})
	if err != nil {
		return SessionInfo{}, err
	}
	return infoOf(sess), nil
}

// ListSessions returns one page of the tenant's sessions, newest first.
func (s *Store) ListSessions(ctx context.Context, o ListOptions) (ListResult, error) {
	if err := s.on(); err != nil {
		return ListResult{}, err
	}
	if err := o.normalize(); err != nil {
		return ListResult{}, err
	}
	filter := func(q *bun.SelectQuery) *bun.SelectQuery {
		q = s.owned(q)
		if o.UserID != "" {
			q = q.Where("session.user_id = ?", o.UserID)
		}
		if o.AgentName != "" {
			// In any case: "Planner" finds the sessions of "planner".
			q = q.Where("lower(session.agent_name) = lower(?)", o.AgentName)
		}
		if len(o.Statuses) > 0 {
			q = q.Where("session.status IN (?)", bun.List(o.Statuses))
		}
		for _, c := range []struct {
			t  time.Time
			op string
		}{{o.CreatedAfter, "session.created_at > ?"}, {o.CreatedBefore, "session.created_at < ?"},
			{o.UpdatedAfter, "session.updated_at > ?"}, {o.UpdatedBefore, "session.updated_at < ?"}} {
			if !c.t.IsZero() {
				q = q.Where(c.op, c.t.UTC())
			}
		}
		return q
	}
	// bun directly rather than Repository[T]: the keyset cursor and the
	// time ranges are conditions Repository's column filters do not express.
	total, err := filter(s.db.NewSelect().Model((*table.Session)(nil))).Count(ctx)
	if err != nil {
		return ListResult{}, fmt.Errorf("list sessions: %w", err)
	}
	var rows []table.Session
	q := filter(s.db.NewSelect().Model(&rows)).OrderExpr("session.created_at DESC, session.id DESC").Limit(int64(o.Limit) + 1)
	if o.Cursor != "" {
		c, err := decodeCursor(o.Cursor)
		if err != nil {
			return ListResult{}, err
		}
		q = q.Where("(session.created_at < ? OR (session.created_at = ? AND session.id < ?))", c.CreatedAt, c.CreatedAt, c.ID)
	}
	if err := q.Scan(ctx); err != nil {
		return ListResult{}, fmt.Errorf("list sessions: %w", err)
	}
	res := ListResult{Total: int(total), Limit: o.Limit, Sessions: []SessionInfo{}}
	for i := range rows {
		if i == o.Limit {
			last := rows[i-1]
			res.NextCursor = encodeCursor(cursor{CreatedAt: last.CreatedAt.UTC(), ID: last.ID})
			break
		}
		res.Sessions = append(res.Sessions, infoOf(&rows[i]))
	}
	return res, nil
}

// Stats is the size of a session as stored: its live messages, their
// characters (code points, in full, before any cut) and the newest one's time.
type Stats struct {
	Messages    int       `json:"messages"`
	Chars       int64     `json:"chars"`
	LastMessage time.Time `json:"last_message"`
	// Failed counts the steps convert.Failure marks (failures.go).
	Failed int `json:"failed"`
}

// SessionStats returns the Stats of each of the tenant's sessions among ids,
// in one query (a session without messages is left out).
func (s *Store) SessionStats(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]Stats, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]Stats, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []struct {
		SessionID uuid.UUID `bun:"session_id"`
		N         int       `bun:"n"`
		Chars     int64     `bun:"chars"`
		Last      dbTime    `bun:"last"`
	}
	err := s.db.NewRaw("SELECT session_id, count(*) AS n, COALESCE(sum("+s.sql.Length+"), 0) AS chars, max(created_at) AS last"+
		" FROM messages WHERE session_id IN (?) AND tenant_id = ? AND deleted_at IS NULL GROUP BY session_id",
		bun.List(ids), s.userID).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session stats: %w", err)
	}
	failed, err := s.failedSteps(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.SessionID] = Stats{Messages: r.N, Chars: r.Chars, LastMessage: r.Last.Time.UTC(), Failed: failed[r.SessionID]}
	}
	return out, nil
}

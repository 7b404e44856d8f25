package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
)

// Limits bound what one tenant can make a store hold (issue 42 H1: one
// tenant grew a session to 200,000 messages in 11 s). Zero is no limit, the
// default. A store that would pass one writes nothing and answers a
// *LimitError (409 limit_reached, naming the field). Concurrent stores may
// each pass the check and together go over by at most their number.
type Limits struct {
	// SessionMessages is how many messages one session may hold for a
	// tenant, removed ones included (they stay for audit until purged).
	SessionMessages int
	// Sessions is how many sessions a tenant may own, deleted ones
	// included until purged.
	Sessions int
}

// ErrLimit is what a *LimitError is.
var ErrLimit = errors.New("limit reached")

// LimitError says which limit a store would pass.
type LimitError struct {
	Field, Msg string
}

func (e *LimitError) Error() string { return e.Msg }
func (e *LimitError) Unwrap() error { return ErrLimit }

// checkLimits refuses a store of adding messages into session sid that
// would pass a limit. Each check is one indexed read: the session's kept
// count (migrations.PositionsTable) or, without one, a count that stops at
// the limit; the tenant's sessions are counted only when sid is new.
func (s *Store) checkLimits(ctx context.Context, sid uuid.UUID, msgs []models.HistoryMessage) error {
	adding := len(msgs)
	l := s.limits
	if l.SessionMessages > 0 {
		var n int
		err := s.db.NewRaw("SELECT n FROM "+migrations.PositionsTable+" WHERE session_id = ? AND tenant_id = ?", sid, s.userID).Scan(ctx, &n)
		if errors.Is(err, sql.ErrNoRows) {
			err = s.db.NewRaw("SELECT count(*) FROM (SELECT 1 FROM messages WHERE session_id = ? AND tenant_id = ? LIMIT ?) x",
				sid, s.userID, l.SessionMessages+1).Scan(ctx, &n)
		}
		if err != nil {
			return fmt.Errorf("check the session's size: %w", err)
		}
		if n+adding > l.SessionMessages {
			// A resend of messages stored already adds nothing: it must
			// get its answer, not a refusal, at the limit.
			stored, err := s.storedAlready(ctx, sid, msgs)
			if err != nil {
				return fmt.Errorf("check a resend at the limit: %w", err)
			}
			adding -= stored
		}
		if n+adding > l.SessionMessages {
			return &LimitError{"messages", fmt.Sprintf("the session holds %d messages and may hold %d (the server's limit per session): %d more would pass it",
				n, l.SessionMessages, adding)}
		}
	}
	if l.Sessions > 0 {
		var exists int
		if err := s.db.NewRaw("SELECT count(*) FROM sessions WHERE id = ?", sid).Scan(ctx, &exists); err != nil {
			return fmt.Errorf("check the session: %w", err)
		}
		if exists == 0 {
			var n int
			if err := s.db.NewRaw("SELECT count(*) FROM (SELECT 1 FROM sessions WHERE tenant_id = ? LIMIT ?) x", s.userID, l.Sessions).Scan(ctx, &n); err != nil {
				return fmt.Errorf("count the sessions: %w", err)
			}
			if n >= l.Sessions {
				return &LimitError{"session_id", fmt.Sprintf("the user owns %d sessions, the server's limit: delete one with purge, or store into one of them", n)}
			}
		}
	}
	return nil
}

// storedAlready counts the messages of msgs whose caller id the session
// holds.
func (s *Store) storedAlready(ctx context.Context, sid uuid.UUID, msgs []models.HistoryMessage) (int, error) {
	var ids []uuid.UUID
	for _, m := range msgs {
		if id, err := uuid.Parse(m.ID); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	err := s.db.NewRaw("SELECT count(*) FROM messages WHERE session_id = ? AND id IN (?)", sid, bun.List(ids)).Scan(ctx, &n)
	return n, err
}

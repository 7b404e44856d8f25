package sessionstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/repository/table"
)

// transitions is the lifecycle: active may become completed, cancelled or
// error; those end the session (only a completed one may be reopened).
var transitions = map[string][]string{
	models.StatusActive:    {models.StatusCompleted, models.StatusCancelled, models.StatusError},
	models.StatusCompleted: {models.StatusActive},
}

// CheckTransition reports whether from -> to is allowed (ErrInvalidTransition
// when not); UpdateSession and SetStatus apply it.
func CheckTransition(from, to string) error {
	if from == "" {
		from = models.StatusActive
	}
	for _, t := range transitions[from] {
		if t == to {
			return nil
		}
	}
	return fmt.Errorf("%w: %s -> %s", ErrInvalidTransition, from, to)
}

// SessionUpdate changes a session; nil fields stay as they are. Settings are
// merged into metadata.settings; a nil value removes that setting.
type SessionUpdate struct {
	Name      *string
	AgentName *string
	Settings  map[string]any
	// Status, when set, moves the session along its lifecycle (as SetStatus,
	// with Reason) in the same transaction: a refused transition leaves name,
	// agent and settings unchanged too.
	Status *string
	Reason string
}

// ExpireOptions controls Expire.
type ExpireOptions struct {
	Idle   time.Duration // sessions not updated for longer than this
	Purge  bool          // delete them instead of marking them completed
	DryRun bool          // only report what would happen
	Now    time.Time     // zero = the store's clock
}

// modifySession runs fn on the session row inside a transaction holding the
// session's write lock, then saves it.
func (s *Store) modifySession(ctx context.Context, sessionKey string, fn func(tx bun.Tx, sess *table.Session) error) (SessionInfo, error) {
	var info SessionInfo
	err := s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error {
		var err error
		info, err = s.modifySessionAt(ctx, sid, fn)
		return err
	})
	return info, err
}

// modifySessionAt is modifySession of one session id.
func (s *Store) modifySessionAt(ctx context.Context, sid uuid.UUID, fn func(tx bun.Tx, sess *table.Session) error) (SessionInfo, error) {
	var out *table.Session
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.drv.lock(ctx, tx, sid); err != nil {
			return err
		}
		sess, err := s.getSession(ctx, tx, sid)
		if err != nil {
			return err
		}
		if sess.Metadata == nil {
			sess.Metadata = models.JSONMap{}
		}
		if err := fn(tx, sess); err != nil {
			return err
		}
		sess.UpdatedAt = s.clock()
		_, err = tx.NewUpdate().Model(sess).Column("name", "agent_name", "status", "metadata", "updated_at").WherePK().Exec(ctx)
		out = sess
		return err
	})
	if err != nil {
		return SessionInfo{}, err
	}
	return infoOf(out), nil
}

// SetStatus moves the session along its lifecycle. Cancelling or failing
// records the reason as a system message; the reason also goes to
// metadata.reason.
func (s *Store) SetStatus(ctx context.Context, sessionKey, status, reason string) (SessionInfo, error) {
	return s.UpdateSession(ctx, sessionKey, SessionUpdate{Status: &status, Reason: reason})
}

// setStatus is the status part of an update, inside its transaction.
func (s *Store) setStatus(ctx context.Context, tx bun.Tx, sessionKey string, sess *table.Session, status, reason string) error {
	if err := CheckTransition(sess.Status, status); err != nil {
		return err
	}
	if (status == models.StatusCancelled || status == models.StatusError) && reason != "" {
		msg := models.HistoryMessage{Role: models.RoleSystem, Content: fmt.Sprintf("Session %s: %s", status, reason)}
		p, err := s.plan(sess.ID, sessionKey, []models.HistoryMessage{msg}, "", writeOpts{allowInactive: true})
		if err != nil {
			return err
		}
		if _, err := s.write(ctx, tx, p); err != nil {
			return err
		}
	}
	sess.Status = status
	if reason != "" {
		sess.Metadata["reason"] = reason
	} else {
		delete(sess.Metadata, "reason")
	}
	return nil
}

// UpdateSession changes name, agent and settings.
func (s *Store) UpdateSession(ctx context.Context, sessionKey string, u SessionUpdate) (SessionInfo, error) {
	if err := s.on(); err != nil {
		return SessionInfo{}, err
	}
	if u.Name != nil {
		if err := models.CheckText(-1, "name", *u.Name, models.MaxSessionName); err != nil {
			return SessionInfo{}, err
		}
	}
	if u.AgentName != nil {
		if err := models.CheckText(-1, "agent_name", *u.AgentName, models.MaxAgentName); err != nil {
			return SessionInfo{}, err
		}
	}
	if u.Settings != nil {
		b, err := json.Marshal(u.Settings)
		if err != nil {
			return SessionInfo{}, fieldErr(-1, "settings", "not JSON: %v", err)
		}
		if err := msgcheck.CheckJSON(-1, "settings", b, MaxToolArgsBytes); err != nil {
			return SessionInfo{}, err
		}
	}
	if u.Status != nil && !models.IsStatus(*u.Status) {
		return SessionInfo{}, fieldErr(-1, "status", "%q is not active, completed, cancelled or error", *u.Status)
	}
	if err := models.CheckText(-1, "reason", u.Reason, 0); err != nil {
		return SessionInfo{}, err
	}
	// Everything is checked above; the changes below happen in one
	// transaction, so a refused transition leaves the session as it was.
	return s.modifySession(ctx, sessionKey, func(tx bun.Tx, sess *table.Session) error {
		applyUpdate(sess, u)
		if u.Status != nil {
			return s.setStatus(ctx, tx, sessionKey, sess, *u.Status, u.Reason)
		}
		return nil
	})
}

func applyUpdate(sess *table.Session, u SessionUpdate) {
	if u.Name != nil {
		sess.Name = models.Ptr(*u.Name)
	}
	if u.AgentName != nil {
		sess.AgentName = models.Ptr(*u.AgentName)
	}
	if u.Settings != nil {
		cur, _ := sess.Metadata["settings"].(map[string]any)
		next := maps.Clone(cur)
		if next == nil {
			next = map[string]any{}
		}
		for k, v := range u.Settings {
			if v == nil {
				delete(next, k)
			} else {
				next[k] = v
			}
		}
		sess.Metadata["settings"] = next
	}
}

// DeleteOptions shape DeleteSession.
type DeleteOptions struct {
	Purge bool // remove the rows instead of marking them deleted
}

// DeleteSession soft-deletes the session and the tenant's messages in it
// (deleted_at set, as the Python service does), or with purge removes the tenant's
// messages and, when no other tenant's remain, the session row.
func (s *Store) DeleteSession(ctx context.Context, sessionKey string, o DeleteOptions) error {
	purge := o.Purge
	if err := s.on(); err != nil {
		return err
	}
	return s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error { return s.deleteSession(ctx, sid, purge) })
}

// deleteSession is DeleteSession of one session id.
func (s *Store) deleteSession(ctx context.Context, sid uuid.UUID, purge bool) error {
	return s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// The session's write lock first, as a store takes it: a store and a
		// delete then run one after the other instead of locking each
		// other's rows in opposite orders (40P01).
		if err := s.drv.lock(ctx, tx, sid); err != nil {
			return err
		}
		if _, err := s.getSession(ctx, tx, sid); err != nil {
			// A purge also finishes what a soft delete began: the session
			// is invisible to every read, but its rows are still there.
			if !purge || !errors.Is(err, ErrNotFound) {
				return err
			}
			var n int
			if qerr := tx.NewRaw("SELECT count(*) FROM sessions WHERE id = ? AND tenant_id = ? AND deleted_at IS NOT NULL",
				sid, s.userID).Scan(ctx, &n); qerr != nil || n == 0 {
				return errors.Join(err, qerr)
			}
		}
		return s.deleteTx(ctx, tx, sid, purge)
	})
}

func (s *Store) deleteTx(ctx context.Context, tx bun.Tx, sid uuid.UUID, purge bool) error {
	now := s.now().UTC()
	if purge {
		if _, err := tx.NewDelete().Model((*table.Message)(nil)).Where("session_id = ? AND tenant_id = ?", sid, s.userID).Exec(ctx); err != nil {
			return err
		}
		if _, err := tx.NewRaw("DELETE FROM "+migrations.PositionsTable+" WHERE session_id = ? AND tenant_id = ?", sid, s.userID).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewDelete().Model((*table.Session)(nil)).Where("id = ?", sid).
			Where("NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = ?)", sid).Exec(ctx)
		return err
	}
	if _, err := tx.NewUpdate().Model((*table.Message)(nil)).Set("deleted_at = ?", now).
		Where("session_id = ? AND tenant_id = ? AND deleted_at IS NULL", sid, s.userID).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewUpdate().Model((*table.Session)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
		Where("id = ?", sid).Where("tenant_id = ?", s.userID).Exec(ctx)
	return err
}

// Expire marks the tenant's active sessions idle for longer than o.Idle as
// completed with metadata.reason "idle_timeout" (or purges them) and returns
// them. With DryRun nothing changes.
func (s *Store) Expire(ctx context.Context, o ExpireOptions) ([]SessionInfo, error) {
	if err := s.on(); err != nil {
		return nil, err
	}
	if o.Idle <= 0 {
		return nil, fieldErr(-1, "idle", "must be a positive duration")
	}
	now := o.Now
	if now.IsZero() {
		now = s.now()
	}
	var rows []table.Session
	err := s.db.NewSelect().Model(&rows).Where("session.status = ?", models.StatusActive).
		Where("session.deleted_at IS NULL").Where("session.tenant_id = ?", s.userID).
		Where("session.updated_at < ?", now.Add(-o.Idle).UTC()).OrderExpr("session.updated_at, session.id").Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("expire: %w", err)
	}
	out := make([]SessionInfo, 0, len(rows))
	for i := range rows {
		out = append(out, infoOf(&rows[i]))
		if o.DryRun {
			continue
		}
		key := rows[i].ID.String()
		if o.Purge {
			err = s.DeleteSession(ctx, key, DeleteOptions{Purge: true})
		} else {
			_, err = s.modifySession(ctx, key, func(_ bun.Tx, sess *table.Session) error {
				if sess.Status != models.StatusActive {
					return nil // changed since the select
				}
				sess.Status = models.StatusCompleted
				sess.Metadata["reason"] = "idle_timeout"
				return nil
			})
		}
		if err != nil {
			return out, fmt.Errorf("expire %s: %w", key, err)
		}
	}
	return out, nil
}

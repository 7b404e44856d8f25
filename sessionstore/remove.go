package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/table"
)

// Removing messages is what an agent framework's session asks of a store
// (the OpenAI Agents SDK's pop_item and clear_session). A removed message is
// soft-deleted, never destroyed: it stays for the audit trail, a load leaves
// it out, and every stored REM LOOKUP key keeps naming the message it named
// (positions count soft-deleted rows, SPEC §4). Both take the session's write
// lock, so they serialize with stores.

// PopMessage soft-deletes the tenant's last live message of the session and
// returns it in full, with its id and the extras a full load prints; ok is
// false when the session has no live message of the tenant. A session the
// tenant does not own is ErrNotFound.
func (s *Store) PopMessage(ctx context.Context, sessionKey string) (m models.HistoryMessage, ok bool, err error) {
	if _, err := s.SessionUUID(sessionKey); err != nil || !s.enabled {
		return m, false, err
	}
	err = s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error {
		var err error
		m, ok, err = s.popMessage(ctx, sid)
		return err
	})
	return m, ok, err
}

// popMessage is PopMessage of one session id.
func (s *Store) popMessage(ctx context.Context, sid uuid.UUID) (m models.HistoryMessage, ok bool, err error) {
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.drv.lock(ctx, tx, sid); err != nil {
			return err
		}
		if _, err := s.getSession(ctx, tx, sid); err != nil {
			return err
		}
		var id uuid.UUID
		err := tx.NewRaw(`SELECT m.id FROM messages m WHERE m.session_id = ? AND m.tenant_id = ? AND m.deleted_at IS NULL
			ORDER BY m.created_at DESC, m.id DESC LIMIT 1`, sid, s.userID).Scan(ctx, &id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("find the last message: %w", err)
		}
		// The rows from the last live one on (a bounded load's index range):
		// the message comes back whole, so no position is counted (:
		// counting one took 1.1 s in a 200,000-message session, holding the
		// session's lock).
		err = s.eachRow(ctx, inTx(tx), rowsArgs{sid: sid, tenant: s.userID, limit: noLimit, sources: true, lastN: 1}, func(r storedRow) error {
			if r.ID == id {
				m, ok = toHistory(r, true, true), true
				m.ID = r.ID.String()
			}
			return nil
		})
		if err != nil || !ok {
			return errors.Join(err, fmt.Errorf("message %s moved while it was removed", id))
		}
		return s.softDelete(ctx, tx, sid, "id = ?", id)
	})
	if err != nil {
		return models.HistoryMessage{}, false, fmt.Errorf("pop the last message of session %s: %w", sid, err)
	}
	return m, ok, nil
}

// ClearMessages soft-deletes every live message of the tenant in the session
// and returns how many; the session itself stays, with its status.
func (s *Store) ClearMessages(ctx context.Context, sessionKey string) (int, error) {
	if _, err := s.SessionUUID(sessionKey); err != nil || !s.enabled {
		return 0, err
	}
	var n int
	err := s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error {
		var err error
		n, err = s.clearMessages(ctx, sid)
		return err
	})
	return n, err
}

// clearMessages is ClearMessages of one session id.
func (s *Store) clearMessages(ctx context.Context, sid uuid.UUID) (int, error) {
	var n int
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := s.drv.lock(ctx, tx, sid); err != nil {
			return err
		}
		if _, err := s.getSession(ctx, tx, sid); err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT count(*) FROM messages WHERE session_id = ? AND tenant_id = ? AND deleted_at IS NULL",
			sid, s.userID).Scan(ctx, &n); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		return s.softDelete(ctx, tx, sid, "TRUE")
	})
	if err != nil {
		return 0, fmt.Errorf("clear session %s: %w", sid, err)
	}
	return n, nil
}

// softDelete marks the tenant's live messages of the session that match
// where as deleted and touches the session.
func (s *Store) softDelete(ctx context.Context, tx bun.Tx, sid uuid.UUID, where string, args ...any) error {
	now := s.clock()
	if _, err := tx.NewUpdate().Model((*table.Message)(nil)).Set("deleted_at = ?", now).Set("updated_at = ?", now).
		Where("session_id = ? AND tenant_id = ? AND deleted_at IS NULL", sid, s.userID).Where(where, args...).Exec(ctx); err != nil {
		return err
	}
	_, err := tx.NewUpdate().Model((*table.Session)(nil)).
		Set("updated_at = CASE WHEN updated_at > ? THEN updated_at ELSE ? END", now, now).Where("id = ?", sid).Exec(ctx)
	return err
}

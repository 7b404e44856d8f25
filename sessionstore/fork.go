package sessionstore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
)

// ForkOptions controls Fork.
type ForkOptions struct {
	UpTo          int    // copy the first UpTo live messages; 0 = all
	NewSessionKey string // "" = a new random UUID
}

// Fork copies the first o.UpTo live messages of the session into a new
// session: new row ids, fresh keys that resolve in the new session, created_at
// kept, and metadata.forked_from on the new session. The original is untouched.
// UpTo beyond the session's length is an error, not a silent copy of less.
func (s *Store) Fork(ctx context.Context, sessionKey string, o ForkOptions) (SessionInfo, error) {
	if err := s.on(); err != nil {
		return SessionInfo{}, err
	}
	sid, _, err := s.sessionOf(ctx, sessionKey)
	if err != nil {
		return SessionInfo{}, err
	}
	newKey, nid, err := o.target(s.userID)
	if err != nil {
		return SessionInfo{}, err
	}
	if isName(newKey) {
		// A target name whose public id another tenant holds forks to the
		// name's private id (names.go), where the tenant's own session of
		// that name would be.
		if alt, ok, err := s.privateSession(ctx, newKey, true); err != nil {
			return SessionInfo{}, err
		} else if ok {
			nid = alt
		}
	}
	var out *table.Session
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		src, err := s.getSession(ctx, tx, sid)
		if err != nil {
			return err
		}
		// The target must not exist for anyone: a fork never writes into
		// a session, its own or another tenant's.
		if n, err := repository.New[table.Session](tx).Count(ctx, repository.Query{
			Filters: []repository.Filter{{Column: "id", Value: nid}}, IncludeDeleted: true}); err != nil || n > 0 {
			if err == nil {
				err = fieldErr(-1, "new_session_id", "session %s already exists", newKey)
			}
			return err
		}
		rows, err := s.fullRows(ctx, tx, sid)
		if err != nil {
			return err
		}
		copies := forkRows(rows, nid, o.UpTo, s.userID)
		if o.UpTo > len(copies) {
			return fieldErr(-1, "up_to", "the session has %d messages, fewer than %d", len(copies), o.UpTo)
		}
		// A fork makes a session and its messages: the limits are checked
		// here, under the locks a store takes to make one.
		if err := s.limits.checkWrite(ctx, BunTx(tx), nid, s.userID, len(copies)); err != nil {
			return err
		}
		out = forkSession(src, nid, newKey, sessionKey, o.UpTo, s.userID, s.clock())
		if err := repository.New[table.Session](tx).Insert(ctx, out); err != nil {
			if repository.IsUniqueViolation(err) {
				// A concurrent fork created it after our check: the answer
				// of the two forks one after the other.
				return fieldErr(-1, "new_session_id", "session %s already exists", newKey)
			}
			return err
		}
		return repository.New[table.Message](tx).Insert(ctx, copies...)
	})
	if err != nil {
		return SessionInfo{}, fmt.Errorf("fork %s: %w", sid, err)
	}
	return infoOf(out), nil
}

// target checks o and names the new session: o.NewSessionKey, or a new UUID.
func (o ForkOptions) target(userID string) (string, uuid.UUID, error) {
	if o.UpTo < 0 {
		return "", uuid.Nil, fieldErr(-1, "up_to", "must be >= 0")
	}
	key := o.NewSessionKey
	if key == "" {
		key = uuid.NewString()
	}
	id, err := SessionUUID(userID, key)
	return key, id, err
}

// fullRows reads the tenant's full rows of a session, for copying.
func (s *Store) fullRows(ctx context.Context, db bun.IDB, sid uuid.UUID) ([]table.Message, error) {
	var ms []table.Message
	err := db.NewSelect().Model(&ms).Where("session_id = ? AND tenant_id = ?", sid, s.userID).OrderExpr("created_at, id").Scan(ctx)
	return ms, err
}

// forkSession builds the new session row.
func forkSession(src *table.Session, nid uuid.UUID, newKey, srcKey string, upTo int, tenant string, now time.Time) *table.Session {
	meta := models.JSONMap{}
	for k, v := range src.Metadata {
		if k != "reason" && k != "forked_from" {
			meta[k] = v
		}
	}
	meta["forked_from"] = map[string]any{"session_id": src.ID.String(), "session_key": srcKey, "up_to": upTo, "at": models.FormatTimestamp(now)}
	return &table.Session{ID: nid, Name: models.Ptr(newKey), Description: src.Description, AgentName: src.AgentName,
		Status: models.StatusActive, GraphEdges: src.GraphEdges, Metadata: meta, Tags: src.Tags,
		UserID: src.UserID, TenantID: models.Ptr(tenant), CreatedAt: now, UpdatedAt: now}
}

// forkRows copies the first upTo live rows with new ids and keys for their
// new positions; a compaction summary's boundary is mapped to the new positions.
func forkRows(rows []table.Message, nid uuid.UUID, upTo int, tenant string) []*table.Message {
	newPos := map[int]int{}
	var out []*table.Message
	for p, r := range rows {
		if r.DeletedAt != nil {
			continue
		}
		if upTo > 0 && len(out) == upTo {
			break
		}
		newPos[p] = len(out)
		m := r
		m.ID, m.SessionID, m.TenantID = uuid.New(), nid, models.Ptr(tenant)
		meta := maps.Clone(m.Metadata)
		if meta == nil {
			meta = models.JSONMap{}
		}
		meta["message_index"] = len(out)
		meta["entity_key"] = compressor.BuildKey(nid.String(), len(out))
		if k, ok := asInt(meta["compacts_before"]); ok {
			n := 0 // the copied rows before position k (never counted up to k: it is any stored number)
			for q := range newPos {
				if q < k {
					n++
				}
			}
			meta["compacts_before"] = n
		}
		m.Metadata = meta
		out = append(out, &m)
	}
	return out
}

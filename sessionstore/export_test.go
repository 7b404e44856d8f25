package sessionstore

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/remstore/remstore/models"
)

// ServerCuts counts the rows of a compressed load that the database cut
// (tests only: the proof that the middle of an answer stays on the server).
func ServerCuts(s *Store, key string) (int, error) {
	sid, err := s.SessionUUID(key)
	if err != nil {
		return 0, err
	}
	n := 0
	err = s.drv.eachRow(context.Background(), s.db, rowsArgs{sid: sid, tenant: s.userID, limit: noLimit, cut: s.comp.TruncateLength()},
		func(r storedRow) error {
			if r.Length >= 0 {
				n++
			}
			return nil
		})
	return n, err
}

// CutOnServer makes s's loads cut every long answer on the database, not
// only those of more than cutWholeBytes bytes (tests only: both cuts are
// held to the compressor's).
func CutOnServer(s *Store) *Store {
	c := *s
	c.whole = 0
	return &c
}

// PlainRowsMismatch reads the session's rows twice, every field and a plain
// load's fields, and returns the first row whose plain-load message differs
// (tests only: the proof that rowsArgs.plain leaves out nothing a load
// without extras shows), or -1.
func PlainRowsMismatch(s *Store, key string) (int, error) {
	sid, err := s.SessionUUID(key)
	if err != nil {
		return 0, err
	}
	read := func(plain bool) ([]storedRow, error) {
		var out []storedRow
		err := s.drv.eachRow(context.Background(), s.db, rowsArgs{sid: sid, tenant: s.userID, limit: noLimit, cut: s.comp.TruncateLength(), plain: plain},
			func(r storedRow) error { out = append(out, r); return nil })
		return out, err
	}
	full, err := read(false)
	if err != nil {
		return 0, err
	}
	plain, err := read(true)
	if err != nil {
		return 0, err
	}
	if len(full) != len(plain) {
		return len(plain), nil
	}
	for i := range full {
		a, err := json.Marshal(toHistory(full[i], false, false))
		if err != nil {
			return 0, err
		}
		b, _ := json.Marshal(toHistory(plain[i], false, false))
		if string(a) != string(b) || full[i].Key != plain[i].Key || full[i].Length != plain[i].Length {
			return i, nil
		}
	}
	return -1, nil
}

// MergedCalls counts the store calls that ran merged into another's call
// of the store function (tests only: the proof that turns.go grouped).
func MergedCalls(s *Store) int64 {
	if s.db.turns == nil {
		return 0
	}
	return s.db.turns.merged.Load()
}

// ByPosition makes s's compacted loads find the summary and the rows it
// leaves shown by position (a count, then offsets), as every compacted load
// did before index ranges (tests only: both must give the same history).
func ByPosition(s *Store) *Store {
	c := *s
	c.byPosition = true
	return &c
}

// LoadsByRange says whether a load of the session with o reads its
// compacted part by index ranges from the summary (loadPlan.keptID), not by
// position (tests only).
func LoadsByRange(s *Store, key string, o LoadOptions) (bool, error) {
	sid, err := s.SessionUUID(key)
	if err != nil {
		return false, err
	}
	p, err := s.loadPlan(context.Background(), sid, o)
	return p.taken == nil && p.keptID != uuid.Nil && p.summaryID != uuid.Nil, err
}

// HandOutItem is what a load makes of a row's Agents SDK item (tests only:
// the property that it hands out only what the row's view holds).
func HandOutItem(m models.HistoryMessage) models.HistoryMessage { return withViewedItem(m) }

// EnsureSession is ensureSession, for the tests of creating a session row
// alone.
func (s *Store) EnsureSession(ctx context.Context, sessionKey, userID string) (uuid.UUID, error) {
	return s.ensureSession(ctx, sessionKey, userID)
}

package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// The REM LOOKUP tool as every surface offers it to a model (the MCP server,
// the model SDK adapters under sdk/): one name and one description.
const (
	LookupToolName        = "rem_lookup"
	LookupToolDescription = "Recover the full text of a message that was truncated with " +
		"'[Message truncated - REM LOOKUP <key> to recover full content]'. Pass the key."
)

// Lookup returns the full content behind a REM LOOKUP key (bare, or as a
// "REM LOOKUP <key>" / "LOOKUP <key>" phrase), for the store's tenant only.
// It tries the stored entity_key (one index probe), then the key's position
// among the tenant's live rows of its session, as the peer numbers them.
// Both probes name the key's session, so on Citus each reads one shard; a
// key cut to 255 code points hides its session and is probed everywhere. It
// only ever returns an assistant message (role assistant or empty): where
// neither finds one, ErrNotFound.
func (s *Store) Lookup(ctx context.Context, key string) (string, error) {
	k, err := ParseLookupKey(key)
	if err != nil {
		return "", err
	}
	if !s.enabled {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	var content string
	err = s.withRetry(ctx, "lookup "+k.Raw, connectionLost, func() error {
		var err error
		content, err = s.lookup(ctx, k)
		return err
	})
	return content, err
}

// ParseLookupKey is the check Lookup makes of a key before any query, for
// callers that check input before they open the database: a FieldError
// naming "key".
func ParseLookupKey(key string) (compressor.Key, error) {
	k, err := compressor.ParseKey(key)
	if err != nil {
		return k, &models.FieldError{Index: -1, Field: "key", Reason: err.Error()}
	}
	return k, nil
}

// lookupQueries are the probes of a lookup, by dialect (true: PostgreSQL):
// by stored key within the key's session, by stored key alone (a cut key),
// and by position.
var lookupQueries = map[bool]struct{ byKey, byOpaqueKey, byPosition string }{}

func init() {
	for _, pg := range []bool{true, false} {
		sqlText := repository.SQLFor(pg)
		byKey := "SELECT content FROM messages WHERE " + sqlText.EntityKey + " = ? AND tenant_id = ? AND deleted_at IS NULL" +
			" AND (role = 'assistant' OR role = '')"
		lookupQueries[pg] = struct{ byKey, byOpaqueKey, byPosition string }{
			byKey:       byKey + " AND session_id = ? LIMIT 1",
			byOpaqueKey: byKey + " LIMIT 1",
			byPosition: "SELECT content, role FROM messages WHERE session_id = ? AND tenant_id = ? AND deleted_at IS NULL" +
				" ORDER BY created_at, id LIMIT 1 OFFSET ?",
		}
	}
}

// lookup is one attempt of Lookup.
func (s *Store) lookup(ctx context.Context, k compressor.Key) (string, error) {
	q := lookupQueries[s.sql.Postgres]
	var content string
	if k.Opaque {
		err := s.drv.queryRow(ctx, s.db, q.byOpaqueKey, []any{k.Raw, s.userID}, &content)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
		case err != nil:
			return "", fmt.Errorf("lookup %s: %w", k.Raw, err)
		}
		return content, nil
	}
	sid, err := SessionUUID(s.userID, k.SessionID)
	if err != nil {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	err = s.drv.queryRow(ctx, s.db, q.byKey, []any{k.Raw, s.userID, sid}, &content)
	if err == nil {
		return content, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("lookup %s: %w", k.Raw, err)
	}
	var role string
	err = s.drv.queryRow(ctx, s.db, q.byPosition, []any{sid, s.userID, k.Index}, &content, &role)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("lookup %s: %w", k.Raw, err)
	case role != string(models.RoleAssistant) && role != "":
		return "", fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	return content, nil
}

// LookupIndex is Lookup by (session, index).
func (s *Store) LookupIndex(ctx context.Context, sessionKey string, n int) (string, error) {
	sid, err := s.SessionUUID(sessionKey)
	if err != nil {
		return "", err
	}
	if n < 0 {
		return "", fieldErr(-1, "index", "must be >= 0")
	}
	return s.Lookup(ctx, compressor.BuildKey(sid.String(), n))
}

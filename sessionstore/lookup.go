package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// The REM LOOKUP tool as every surface offers it to a model (compressor's).
const (
	LookupToolName        = compressor.LookupToolName
	LookupToolDescription = compressor.LookupToolDescription
)

// Lookup returns the full content behind a REM LOOKUP key (bare, or as a
// "REM LOOKUP <key>" / "LOOKUP <key>" phrase), for the store's tenant only.
// A key is its message or nothing: it tries the stored
// entity_key (one index probe), then, for rows stored without a key (the
// Python service's), the key's position among the tenant's live rows of its session,
// as the Python service numbers them. A row found by position that holds a key of its
// own is another message, never returned. Both probes name the key's
// session, so on Citus each reads one shard; a key cut to 255 code points
// hides its session and is probed everywhere. It only ever returns a live
// assistant message (role assistant or empty): otherwise ErrNotFound, saying
// why (removed, not an answer, no message under the key).
func (s *Store) Lookup(ctx context.Context, key string) (string, error) {
	content, _, err := s.lookupMessage(ctx, key)
	return content, err
}

// lookupMessage is Lookup, with the id of the row it found (a key search
// places the hit by it).
func (s *Store) lookupMessage(ctx context.Context, key string) (_ string, _ uuid.UUID, err error) {
	ctx, span := s.span(ctx, "remstore.lookup", "")
	if span.IsRecording() {
		span.SetAttributes(attribute.String("remstore.key", msgcheck.Truncate(key, 300)))
	}
	defer func() { endSpan(span, err) }()
	k, err := ParseLookupKey(key)
	if err != nil {
		return "", uuid.Nil, err
	}
	if !s.enabled {
		return "", uuid.Nil, fmt.Errorf("lookup %s: %w", k.Raw, ErrNotFound)
	}
	var content string
	var id uuid.UUID
	err = s.withRetry(ctx, "lookup "+k.Raw, connectionLost, func() error {
		var err error
		content, id, err = s.lookup(ctx, k)
		return err
	})
	return content, id, err
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
		// The answer holding the key, a live one first: a removed one says why
		// the key finds nothing. (Only answers: a load gives a row without a
		// key of its own the key of its position unless an answer holds it.)
		byKey := "SELECT id, content, role, CASE WHEN deleted_at IS NULL THEN 0 ELSE 1 END FROM messages WHERE " + sqlText.EntityKey + " = ? AND tenant_id = ?" +
			" AND (role = 'assistant' OR role = '')"
		order := " ORDER BY CASE WHEN deleted_at IS NULL THEN 0 ELSE 1 END LIMIT 1"
		lookupQueries[pg] = struct{ byKey, byOpaqueKey, byPosition string }{
			byKey:       byKey + " AND session_id = ?" + order,
			byOpaqueKey: byKey + order,
			// A row without a created_at is in no load, so at no position
			// (SQLite sorts NULL first: it was every key's row before).
			byPosition: "SELECT id, content, role, COALESCE(" + sqlText.EntityKey + ", '') FROM messages WHERE session_id = ? AND tenant_id = ? AND deleted_at IS NULL AND created_at IS NOT NULL" +
				" ORDER BY created_at, id LIMIT 1 OFFSET ?",
		}
	}
}

// lookup is one attempt of Lookup.
func (s *Store) lookup(ctx context.Context, k compressor.Key) (string, uuid.UUID, error) {
	q := lookupQueries[s.sql.Postgres]
	notFound := func(why string) error { return fmt.Errorf("lookup %s: %w (%s)", k.Raw, ErrNotFound, why) }
	var id uuid.UUID
	notAnswer := func(why string) error { return notAnswerError{notFound(why)} }
	var content, role string
	var removed int
	// served is the answer of a row found by its stored key.
	served := func(err error) (string, uuid.UUID, error) {
		switch {
		case err != nil:
			return "", uuid.Nil, fmt.Errorf("lookup %s: %w", k.Raw, err)
		case removed != 0:
			return "", uuid.Nil, notAnswer("the message was removed")
		}
		return content, id, nil
	}
	if k.Opaque {
		err := s.queryRow(ctx, s.db, q.byOpaqueKey, []any{k.Raw, s.userID}, &id, &content, &role, &removed)
		if errors.Is(err, sql.ErrNoRows) {
			return "", uuid.Nil, notFound("no message holds this key")
		}
		return served(err)
	}
	sid, err := SessionUUID(s.userID, k.SessionID)
	if err != nil {
		return "", uuid.Nil, notFound("no such session")
	}
	err = s.queryRow(ctx, s.db, q.byKey, []any{k.Raw, s.userID, sid}, &id, &content, &role, &removed)
	if !errors.Is(err, sql.ErrNoRows) {
		return served(err)
	}
	var own string
	err = s.queryRow(ctx, s.db, q.byPosition, []any{sid, s.userID, k.Index}, &id, &content, &role, &own)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", uuid.Nil, notFound("no message at this position")
	case err != nil:
		return "", uuid.Nil, fmt.Errorf("lookup %s: %w", k.Raw, err)
	case own == k.Raw || role != string(models.RoleAssistant) && role != "":
		return "", uuid.Nil, notAnswer("the key names a " + role + " message; only answers are cut and looked up")
	case own != "":
		return "", uuid.Nil, notFound("no message holds this key; the message at its position has a key of its own")
	}
	return content, id, nil
}

// LookupIndex is Lookup by (session, index).
func (s *Store) LookupIndex(ctx context.Context, sessionKey string, n int) (string, error) {
	if _, err := s.SessionUUID(sessionKey); err != nil {
		return "", err
	}
	if n < 0 {
		return "", fieldErr(-1, "index", "must be >= 0")
	}
	var content string
	err := s.byName(ctx, sessionKey, false, func(sid uuid.UUID) error {
		var err error
		content, err = s.Lookup(ctx, compressor.BuildKey(sid.String(), n))
		return err
	})
	return content, err
}

// notAnswerError is a not-found that is ErrNotAnAnswer too.
type notAnswerError struct{ error }

func (e notAnswerError) Unwrap() error        { return e.error }
func (e notAnswerError) Is(target error) bool { return target == ErrNotAnAnswer }

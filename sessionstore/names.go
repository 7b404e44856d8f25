package sessionstore

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/table"
)

// Names and derived ids no other tenant can take (issue 42: H2, M1).
//
// A session name maps to a public id, UUIDv5(user, name) (SessionUUID), which
// anyone can compute: the Python client and the docs do. So another tenant
// can create a session under the id alice's "chat-7" will map to, ahead of
// her. Such a session does not exist for alice (tenancy), and her name must
// not be blocked by it: when the public id answers "not found" for a name,
// the name resolves to a second id derived from a secret of the database
// (remstore_secrets, migration 12), which no tenant can compute. Messages
// without an id in a store under an Idempotency-Key get ids derived from
// the same secret, so no tenant can take those ahead either.
//
// The public id stays the first choice, so existing sessions keep their ids
// and the common call costs nothing more; the secret id is tried only after
// a not-found (a store refused, a read of a missing session, an empty load).
// If the other tenant later removes its session for good, a new store by the
// name starts at the public id again: the older session stays reachable by
// its UUID, which its keys and `sessions list` show.

// secretCache holds a database's secret once read: every Store of one
// Stores shares it.
type secretCache struct {
	mu sync.Mutex
	v  []byte
}

// secretName is the row of remstore_secrets the derivations use.
const secretName = "derive"

func (c *secretCache) get(ctx context.Context, s *Store) ([]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.v != nil {
		return c.v, nil
	}
	var v string
	err := s.db.NewRaw("SELECT value FROM remstore_secrets WHERE name = ?", secretName).Scan(ctx, &v)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err != nil && strings.Contains(err.Error(), "remstore_secrets"):
		return nil, fmt.Errorf("%w (the database's secret, migration 12: run remstore migrate up)", repository.ErrNotMigrated)
	case err != nil:
		return nil, fmt.Errorf("read the database's secret: %w", err)
	case len(v) < 32:
		return nil, fmt.Errorf("the database's secret (remstore_secrets) is too short: %d characters", len(v))
	}
	c.v = []byte(v)
	return c.v, nil
}

// derive is a UUID (version 8, RFC 9562's custom layout) from an HMAC of
// parts under secret: stable for the same parts, unknowable without it.
func derive(secret []byte, parts ...string) uuid.UUID {
	mac := hmac.New(sha256.New, secret)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{0})
	}
	var u uuid.UUID
	copy(u[:], mac.Sum(nil))
	u[6] = u[6]&0x0f | 0x80
	u[8] = u[8]&0x3f | 0x80
	return u
}

// privateSessionID is the name's second id for this tenant (see above).
func (s *Store) privateSessionID(ctx context.Context, name string) (uuid.UUID, error) {
	secret, err := s.secret.get(ctx, s)
	if err != nil {
		return uuid.Nil, err
	}
	return derive(secret, "session", s.userID, name), nil
}

// isName says whether a session key is a name (not a UUID).
func isName(key string) bool {
	_, err := uuid.Parse(key)
	return err != nil
}

// byName runs op on the session key's id. For a name whose public id
// answers ErrNotFound (another tenant's session, or none), op runs again on
// the name's private id when this tenant has a session there; create says
// to run it there anyway (a store creates the session: the public id is
// another tenant's).
func (s *Store) byName(ctx context.Context, key string, create bool, op func(sid uuid.UUID) error) error {
	sid, err := s.SessionUUID(key)
	if err != nil {
		return err
	}
	err = op(sid)
	// A guarded store on another tenant's session reads this tenant's
	// last message there as Empty and answers moved, not not found: that
	// answer sends the call to the private id too, or a tenant who took a
	// name's public id first would refuse every guarded store of it.
	var moved *MovedError
	elsewhere := errors.Is(err, ErrNotFound) || errors.As(err, &moved) && moved.Last == Empty
	if !elsewhere || !isName(key) {
		return err
	}
	alt, ok, aerr := s.privateSession(ctx, key, create)
	if aerr != nil {
		return errors.Join(err, aerr)
	}
	if !ok {
		return err
	}
	return op(alt)
}

// privateSession is the name's private id and whether op should run there:
// the tenant has a session at it, or create is set and the public id is
// another tenant's.
func (s *Store) privateSession(ctx context.Context, key string, create bool) (uuid.UUID, bool, error) {
	alt, err := s.privateSessionID(ctx, key)
	if err != nil {
		return uuid.Nil, false, err
	}
	var n int
	if err := s.db.NewRaw("SELECT count(*) FROM sessions WHERE id = ? AND tenant_id = ?", alt, s.userID).Scan(ctx, &n); err != nil {
		return uuid.Nil, false, err
	}
	if n > 0 {
		return alt, true, nil
	}
	if !create {
		return uuid.Nil, false, nil
	}
	pub, err := s.SessionUUID(key)
	if err != nil {
		return uuid.Nil, false, err
	}
	if err := s.db.NewRaw("SELECT count(*) FROM sessions WHERE id = ? AND (tenant_id IS NULL OR tenant_id <> ?)", pub, s.userID).Scan(ctx, &n); err != nil {
		return uuid.Nil, false, err
	}
	return alt, n > 0, nil
}

// FillIDs gives every message without an id one derived from the
// database's secret, the session (scope), the Idempotency-Key and the
// message's position, so that sending the same request again stores nothing
// twice (the caller-id rule finds them stored), and no other tenant can
// compute the ids and take them first. Ids the caller set are kept.
func (s *Store) FillIDs(ctx context.Context, msgs []models.HistoryMessage, scope, key string) error {
	if err := models.CheckIdempotencyKey(key); err != nil {
		return err
	}
	secret, err := s.secret.get(ctx, s)
	if err != nil {
		return err
	}
	for i := range msgs {
		if msgs[i].ID == "" {
			msgs[i].ID = derive(secret, "message", s.userID, scope, key, strconv.Itoa(i)).String()
		}
	}
	return nil
}

// sessionOf resolves a session key to the tenant's session and its row:
// ErrNotFound when the tenant has none by that key.
func (s *Store) sessionOf(ctx context.Context, key string) (uuid.UUID, *table.Session, error) {
	var sid uuid.UUID
	var sess *table.Session
	err := s.byName(ctx, key, false, func(id uuid.UUID) error {
		var err error
		sid = id
		sess, err = s.getSession(ctx, s.db, id)
		return err
	})
	return sid, sess, err
}

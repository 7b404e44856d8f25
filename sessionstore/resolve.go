package sessionstore

import (
	"context"
	"errors"

	"github.com/google/uuid"
)

// ResolveID is the UUID of the tenant's session by key: the session's own
// when it exists (at the name's public id or at its private one,
// names.go), else the id a store by key would create it at now. What is
// named by session and kept outside the database (the audit dumps) is named
// by this id, never by the key as a caller spelled it: two tenants' "plan"
// are two ids, and a name resolves as every other call resolves it.
//
// A UUID key that is another tenant's session is ErrNotFound, as a store
// into it would be. With storage off, it is SessionUUID's public id.
func (s *Store) ResolveID(ctx context.Context, key string) (uuid.UUID, error) {
	pub, err := s.SessionUUID(key)
	if err != nil || !s.enabled {
		return pub, err
	}
	info, err := s.SessionInfo(ctx, key)
	if err == nil {
		return info.ID, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return uuid.Nil, err
	}
	// None yet: where a store would put it (byName with create).
	var n int
	if err := s.db.NewRaw("SELECT count(*) FROM sessions WHERE id = ? AND (tenant_id IS NULL OR tenant_id <> ?)", pub, s.userID).Scan(ctx, &n); err != nil {
		return uuid.Nil, err
	}
	switch {
	case n == 0:
		return pub, nil
	case !isName(key):
		return uuid.Nil, notFound(pub)
	}
	return s.privateSessionID(ctx, key)
}

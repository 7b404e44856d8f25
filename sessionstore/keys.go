package sessionstore

import (
	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
)

// SessionNamespace is the UUIDv5 namespace that maps session keys which are
// not UUIDs to the UUID stored in sessions.id and messages.session_id:
// 52201df2-8d00-59ec-8da2-59ec0060ce05, which is
// UUIDv5(NameSpaceURL, "https://github.com/remstore/remstore/session").
var SessionNamespace = uuid.MustParse("52201df2-8d00-59ec-8da2-59ec0060ce05")

// SessionUUID maps a session key to its UUID for one user: a UUID (any form
// uuid.Parse accepts) is itself; any other non-empty string is
// UUIDv5(SessionNamespace, userID + "\x00" + key), so two users who both say
// "chat-1" get two sessions. NUL cannot occur in either part, so the name is
// unambiguous; in Python: uuid.uuid5(NS, f"{user_id}\0{key}").
func SessionUUID(userID, key string) (uuid.UUID, error) {
	if err := checkID("session_id", key, MaxSessionKeyLength); err != nil {
		return uuid.Nil, err
	}
	if id, err := uuid.Parse(key); err == nil {
		return id, nil
	}
	if err := checkID("user_id", userID, models.MaxIDLen); err != nil {
		return uuid.Nil, err
	}
	return uuid.NewSHA1(SessionNamespace, []byte(userID+"\x00"+key)), nil
}

// SessionUUID maps a session key for the store's tenant (see SessionUUID).
func (s *Store) SessionUUID(key string) (uuid.UUID, error) { return SessionUUID(s.userID, key) }

package models

import (
	"fmt"
	"strconv"

	"github.com/google/uuid"
)

// MaxIdempotencyKeyLen bounds an Idempotency-Key: long enough for any UUID
// or hash a client makes, short enough to stay out of logs' way.
const MaxIdempotencyKeyLen = 200

// idempotencyNS is the UUIDv5 namespace of ids derived from an
// Idempotency-Key; distinct from the session-key namespace so the two
// can never produce the same UUID from the same text.
var idempotencyNS = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://remstore.dev/ns/idempotency-key"))

// CheckIdempotencyKey refuses keys that are empty, too long or not printable
// ASCII: they travel in a header and a log line.
func CheckIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return &FieldError{Index: -1, Field: "Idempotency-Key", Reason: fmt.Sprintf("must be 1 to %d characters", MaxIdempotencyKeyLen)}
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return &FieldError{Index: -1, Field: "Idempotency-Key", Reason: "must be printable ASCII without spaces"}
		}
	}
	return nil
}

// FillIDs gives every message without an id one derived from scope (the
// user and session the request acts for), the Idempotency-Key and the
// message's position, so that sending the same request again stores
// nothing twice: the store's caller-id rule (SPEC §4) finds them stored.
// Ids the caller set are kept.
func FillIDs(msgs []HistoryMessage, scope, key string) error {
	if err := CheckIdempotencyKey(key); err != nil {
		return err
	}
	base := scope + "\x00" + key + "\x00"
	for i := range msgs {
		if msgs[i].ID == "" {
			msgs[i].ID = uuid.NewSHA1(idempotencyNS, []byte(base+strconv.Itoa(i))).String()
		}
	}
	return nil
}

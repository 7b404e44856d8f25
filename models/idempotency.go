package models

import (
	"fmt"
)

// MaxIdempotencyKeyLen bounds an Idempotency-Key: long enough for any UUID
// or hash a client makes, short enough to stay out of logs' way.
const MaxIdempotencyKeyLen = 200

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

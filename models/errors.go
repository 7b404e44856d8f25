package models

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FieldError reports bad input: which message (by its position in the input
// list, -1 when the error is about the list itself), which field, and why.
// Decoders here and validators in repository return it; callers such as the
// CLI and the HTTP API show Field to the user.
type FieldError struct {
	Index  int
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	switch {
	case e.Index < 0 && e.Field == "":
		return e.Reason
	case e.Index < 0:
		return fmt.Sprintf("field %q: %s", e.Field, e.Reason)
	case e.Field == "":
		return fmt.Sprintf("message %d: %s", e.Index, e.Reason)
	}
	return fmt.Sprintf("message %d: field %q: %s", e.Index, e.Field, e.Reason)
}

// AsFieldError returns the FieldError in err's chain, if any.
func AsFieldError(err error) (*FieldError, bool) {
	var fe *FieldError
	ok := errors.As(err, &fe)
	return fe, ok
}

// CheckText rejects what PostgreSQL cannot store in a text column: invalid
// UTF-8 and NUL; maxRunes > 0 also bounds the length in code points
// (VARCHAR(n) counts characters). i is the message's position (-1: none);
// the error is a *FieldError naming field.
func CheckText(i int, field, s string, maxRunes int) error {
	if !utf8.ValidString(s) {
		return &FieldError{Index: i, Field: field, Reason: "invalid UTF-8"}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return &FieldError{Index: i, Field: field, Reason: "contains a NUL byte"}
	}
	if maxRunes > 0 {
		if n := utf8.RuneCountInString(s); n > maxRunes {
			return &FieldError{Index: i, Field: field, Reason: fmt.Sprintf("longer than %d characters (%d)", maxRunes, n)}
		}
	}
	return nil
}

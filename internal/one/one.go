// Package one reads the optional options value of a call that takes at
// most one (opts ...T), for the Store implementations that share it.
package one

import "github.com/remstore/remstore/models"

// Of returns the options given: the zero value for none, an
// ErrBadRequest naming "options" for more than one.
func Of[T any](o []T) (T, error) {
	var zero T
	switch len(o) {
	case 0:
		return zero, nil
	case 1:
		return o[0], nil
	}
	return zero, &models.FieldError{Index: -1, Field: "options", Reason: "give at most one options value"}
}

package repository

import (
	"database/sql"
	"errors"
	"fmt"
)

// Sentinel errors of this package. Repository[T], the session message store
// and Open return them wrapped; test with errors.Is.
var (
	// ErrNotFound: no row matches (get by id, lookup, session not found).
	ErrNotFound = errors.New("not found")
	// ErrStorageDisabled is never returned to callers of the store (SPEC §7
	// says disabled storage is silent); it is exported for front ends that
	// want to say why nothing was written.
	ErrStorageDisabled = errors.New("storage disabled (POSTGRES_ENABLED is not true)")
	// ErrUnavailable: the database cannot be reached or opened.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrSessionNotActive: a message was stored into a session whose status
	// is not active.
	ErrSessionNotActive = errors.New("session is not active")
	// ErrInvalidTransition: a lifecycle change that the state machine forbids.
	ErrInvalidTransition = errors.New("invalid status transition")
)

// interpret translates driver errors at the package boundary.
func interpret(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w", ErrNotFound)
	}
	return err
}

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
	// ErrUnavailable: the database cannot be reached or opened.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrSessionNotActive: a message was stored into a session whose status
	// is not active.
	ErrSessionNotActive = errors.New("session is not active")
	// ErrNotMigrated: a read-only command found no remstore tables.
	ErrNotMigrated = errors.New("database not migrated: run remstore migrate up")
)

// interpret translates driver errors at the package boundary.
func interpret(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w", ErrNotFound)
	}
	return err
}

package repository

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/remstore/remstore/models"
)

// Sentinel errors of this package. Open and the session store return them
// wrapped; test with errors.Is.
var (
	// ErrNotFound: no such session, key or message (the session store's
	// ErrNotFound is this one).
	ErrNotFound = models.ErrNotFound
	// ErrUnavailable: the database cannot be reached or opened.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrNotMigrated: a read-only command found no remstore tables.
	ErrNotMigrated = errors.New("database not migrated: run remstore migrate up")
)

// IsDataException reports whether err is PostgreSQL refusing a value the
// caller sent (SQLSTATE class 22, data exception: out-of-range numbers and
// dates, invalid text): the caller's fault, never an outage. Transports map
// it to bad input (HTTP 400, exit 2), not to "storage unavailable".
func IsDataException(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22")
}

// IsTimeout reports whether err is a deadline: the caller's context, or
// PostgreSQL cancelling the statement (57014, statement_timeout or a lock wait
// past it). Transports answer "timeout" for it on every route.
func IsTimeout(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "57014"
	}
	var ne interface{ Timeout() bool }
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// IsUniqueViolation reports whether err is a write breaking a unique key:
// PostgreSQL's 23505, SQLite's UNIQUE or PRIMARY KEY constraint. Between
// remstore's check for an id and its insert, a concurrent writer can take
// the id; callers turn this into what the same calls one after the other
// would have answered.
func IsUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "23505"
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		// SQLITE_CONSTRAINT_PRIMARYKEY, SQLITE_CONSTRAINT_UNIQUE
		return coded.Code() == 1555 || coded.Code() == 2067
	}
	return false
}

// IsConstraintViolation reports whether err is the database refusing a row
// for a constraint (PostgreSQL's class 23: unique, foreign key, not null,
// check; SQLite's constraint codes): the data's fault, never an outage.
func IsConstraintViolation(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "23")
	}
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 19 // SQLITE_CONSTRAINT and its extended codes
}

package sessionstore

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Retry bounds: attempts after the first, and the first backoff (doubled each time).
const (
	DefaultRetries = 3
	retryBackoff   = 50 * time.Millisecond
)

// connectionLost reports whether err means the server could not be reached
// or the connection died, as opposed to the server refusing the statement.
func connectionLost(err error) bool {
	if err == nil {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 57P01-03: admin shutdown, crash shutdown, cannot connect now; 08: connection exceptions
		return pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" || pgErr.Code[:2] == "08"
	}
	var ne net.Error
	var ce *pgconn.ConnectError
	return errors.Is(err, sqldriver.ErrBadConn) || errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOENT)
}

// withRetry runs op, retrying while retryable(err) with exponential backoff,
// at most s.retries more times. A connection that stays lost becomes a
// clear ErrUnavailable error.
func (s *Store) withRetry(ctx context.Context, what string, retryable func(error) bool, op func() error) error {
	var err error
	wait := retryBackoff
	for attempt := 0; ; attempt++ {
		if err = op(); err == nil || !retryable(err) || attempt >= s.retries {
			break
		}
		if ctx.Err() != nil {
			break // the caller's deadline, not a lost connection: say so below
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(wait):
		}
		wait *= 2
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if connectionLost(err) {
		return fmt.Errorf("%w: %s: connection to the database lost (%d attempts): %v", ErrUnavailable, what, s.retries+1, firstLine(err))
	}
	return err
}

// neverSent is the retry rule for writes: only when pgx knows the request
// never reached the server, so repeating it cannot apply it twice.
func neverSent(err error) bool {
	return pgconn.SafeToRetry(err) || errors.Is(err, sqldriver.ErrBadConn)
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

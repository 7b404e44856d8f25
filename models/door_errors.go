package models

import (
	"errors"
	"fmt"
)

// The errors every way into remstore answers with, for errors.Is: the
// embedded store, the Go client of serve and the SDK helpers alike.
var (
	// ErrBadRequest is input refused before anything was written; the
	// error is also a *FieldError (AsFieldError) naming the field.
	ErrBadRequest = errors.New("bad request")
	// ErrNotFound is no such session for this user, or no text behind a key.
	ErrNotFound = errors.New("not found")
	// ErrMoved is a guarded append refused because another turn wrote to
	// the session since it was loaded; nothing was written. The error is a
	// *MovedError saying what the session holds now.
	ErrMoved = errors.New("the session moved on since it was loaded")
)

// Is makes every FieldError an ErrBadRequest.
func (e *FieldError) Is(target error) bool { return target == ErrBadRequest }

// EmptySession is the last message of a session without a live message of
// the user: what a load reports and a guarded append may expect.
const EmptySession = "empty"

// MovedError is ErrMoved with the session's last live message now (its id,
// or EmptySession): load again, then run the turn again or store on top.
type MovedError struct {
	Expected, Last string
}

func (e *MovedError) Error() string {
	return fmt.Sprintf("%v: expected last message %s, the session's last is %s", ErrMoved, e.Expected, e.Last)
}

func (e *MovedError) Unwrap() error { return ErrMoved }

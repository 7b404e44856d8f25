package sessionstore

import (
	"errors"
	"fmt"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Sentinel errors of the session store, returned wrapped; test with errors.Is.
var (
	// ErrNotFound: no such session, key or message for this tenant. A
	// session of another tenant is not found either, and nothing of it shows.
	ErrNotFound = repository.ErrNotFound
	// ErrUnavailable: the database cannot be reached.
	ErrUnavailable = repository.ErrUnavailable
	// ErrSessionNotActive: a message was stored into a session whose status
	// is not active.
	ErrSessionNotActive = errors.New("session is not active")
	// ErrInvalidTransition: a lifecycle change the state machine forbids.
	ErrInvalidTransition = errors.New("invalid status transition")
	// ErrConflict: a concurrent call took what this one meant to create (an
	// id, a session) and the call cannot be answered as if they had run in
	// turn.
	ErrConflict = errors.New("conflict with a concurrent write")
	// ErrMoved: a guarded store found the session moved on since its
	// caller loaded it (another turn stored, popped or cleared); nothing
	// was written. The error is a *MovedError saying what the session holds.
	ErrMoved = models.ErrMoved
	// ErrIDReused: a message's id is stored in this session with another
	// role or text: a resend must carry what it sent (a *ReusedIDError
	// names the message). Nothing was written.
	ErrIDReused = errors.New("the id is stored with another message")
	// ErrDisabled: storage is switched off (POSTGRES_ENABLED is not true).
	// Store, load and lookup behave as the contract with the Python service says (the messages back,
	// nothing, not found); everything else that reads or changes sessions
	// (list, show, fork, status, delete, compaction, usage) refuses with it.
	ErrDisabled = errors.New("storage is off (POSTGRES_ENABLED is not true)")
	// ErrNotAnAnswer is beside ErrNotFound when the key's message is the
	// caller's own but cannot be looked up (removed, or not an answer): the
	// user id is right, so an error should not suggest another one.
	ErrNotAnAnswer = errors.New("the key's message is not a live answer")
)

func fieldErr(i int, field, format string, a ...any) error {
	return &models.FieldError{Index: i, Field: field, Reason: fmt.Sprintf(format, a...)}
}

// notFound is the one error for a session the tenant may not see, whether it
// does not exist or belongs to someone else.
func notFound(sid fmt.Stringer) error { return fmt.Errorf("session %s: %w", sid, ErrNotFound) }

// Empty is the guard of a session without a live message of the tenant
// (StoreOptions.ExpectLast, LoadResult.Last).
const Empty = models.EmptySession

// MovedError is ErrMoved with the session's last live message now (its id,
// or Empty): reload the history, then run the turn again or store on top.
type MovedError = models.MovedError

// ReusedIDError is ErrIDReused for message Index of the call.
type ReusedIDError struct{ Index int }

func (e *ReusedIDError) Error() string {
	return fmt.Sprintf("messages[%d].id: %v: a resend must carry the same role and content", e.Index, ErrIDReused)
}

func (e *ReusedIDError) Unwrap() error { return ErrIDReused }

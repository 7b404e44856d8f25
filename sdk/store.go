package sdk

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
)

// Store is where a Go agent keeps its conversation: the embedded store
// (remstore.Open) and serve through the Go client (client.Client.Agent)
// are both one, with the same options, results and errors, so that moving
// from one to the other changes one line.
type Store interface {
	// Load returns the session's history as the next model request needs
	// it: long answers cut to their REM LOOKUP hint, tool calls, usage,
	// model and reasoning included. A session never written is empty.
	Load(ctx context.Context, session string, o ...LoadOptions) (History, error)
	// Append stores messages in one transaction, all or none; with
	// AppendOptions.IfLast, only while the session has not moved on.
	Append(ctx context.Context, session string, msgs []models.HistoryMessage, o ...AppendOptions) (Appended, error)
	// Lookup returns the full text behind a REM LOOKUP key; a key with
	// no live message behind it is ErrNotFound.
	Lookup(ctx context.Context, key string) (string, error)
	// Pop removes the session's last message and returns it; a session
	// without one is ErrNotFound.
	Pop(ctx context.Context, session string) (models.HistoryMessage, error)
	// Clear removes every message of the session and says how many; they
	// stay in the table for audit, and their keys find nothing after.
	Clear(ctx context.Context, session string) (int, error)
	// Close releases what the store holds (the database it opened).
	Close() error
}

// LoadOptions shape a load. The zero value loads the whole history, cut.
type LoadOptions struct {
	// LastN > 0 loads only the last LastN messages, a tool call and its
	// result kept together (a result whose call falls before them is left
	// out with it, so there may be fewer).
	LastN int
	// Since loads only the messages created after it, pairs kept together
	// as for LastN. It cannot be combined with LastN.
	Since time.Time
	// Full returns every answer in full, without the REM LOOKUP cut.
	Full bool
}

// History is a loaded session.
type History struct {
	Messages []models.HistoryMessage
	// Last is the session's last message as the load read it (its id, or
	// models.EmptySession): what AppendOptions.IfLast names to append only
	// while no other turn has written since.
	Last string
}

// AppendOptions shape an append. The zero value appends unguarded.
type AppendOptions struct {
	// IfLast guards the append: it stores only while the session's last
	// message is still this one (History.Last, Appended.Last); otherwise
	// nothing is stored and the error is ErrMoved.
	IfLast string
}

// Appended says what an append stored.
type Appended struct {
	SessionID uuid.UUID
	// Keys[i] is the REM LOOKUP key of message i.
	Keys []string
	// Last is the session's last message after the append: the next
	// guarded append's IfLast.
	Last string
}

// The errors of a Store, for errors.Is.
var (
	// ErrBadRequest is input refused before anything was written; the
	// error is also a *models.FieldError naming the field.
	ErrBadRequest = models.ErrBadRequest
	// ErrNotFound is no such session for this user, or no text behind a key.
	ErrNotFound = models.ErrNotFound
	// ErrMoved is a guarded append refused because another turn wrote to
	// the session since it was loaded; nothing was stored.
	ErrMoved = models.ErrMoved
)

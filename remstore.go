package remstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
)

// The types of a store, named here so that a program needs this package
// alone; they are sdk's and models', the types package client uses.
type (
	Store         = sdk.Store
	LoadOptions   = sdk.LoadOptions
	History       = sdk.History
	AppendOptions = sdk.AppendOptions
	Appended      = sdk.Appended
	Message       = models.HistoryMessage
	ToolCall      = models.ToolCall
	FieldError    = models.FieldError
)

// The roles of a message.
const (
	RoleUser      = models.RoleUser
	RoleAssistant = models.RoleAssistant
	RoleTool      = models.RoleTool
	RoleSystem    = models.RoleSystem
)

// EmptySession is History.Last of a session without a message: what
// AppendOptions.IfLast names to append only to an empty session.
const EmptySession = models.EmptySession

// AsFieldError returns the *FieldError in err's chain: which field of
// which message an ErrBadRequest is about.
func AsFieldError(err error) (*FieldError, bool) { return models.AsFieldError(err) }

// The errors of a store, for errors.Is.
var (
	ErrBadRequest = models.ErrBadRequest // input refused; a *FieldError names the field
	ErrNotFound   = models.ErrNotFound   // no such session or key for this user
	ErrMoved      = models.ErrMoved      // a guarded append refused: another turn wrote first
)

// Options configure Open.
type Options struct {
	// User is whose sessions the store reads and writes (a session name
	// is the user's own). "" is "anonymous" on a database, as the Python
	// service's, and the API key's own user on serve.
	UserID string
	// Migrate upgrades the tables of a database an older remstore (or the
	// Python service alone) made. A database without them (":memory:", a
	// new SQLite file, an empty PostgreSQL database) gets them on open
	// either way; one with pending upgrades and no Migrate is refused,
	// naming `remstore migrate up`.
	Migrate bool
	// APIKey is sent to a serve URL (Authorization: Bearer); "" is
	// REMSTORE_API_KEY's value.
	APIKey string
}

// Open opens a store. dsn is a SQLite file path, ":memory:", a PostgreSQL
// URL (postgres:// or postgresql://) or the URL of a remstore serve
// (http:// or https://).
func Open(ctx context.Context, dsn string, o Options) (Store, error) {
	if strings.HasPrefix(dsn, "http://") || strings.HasPrefix(dsn, "https://") {
		if o.APIKey == "" {
			o.APIKey = os.Getenv("REMSTORE_API_KEY")
		}
		c, err := client.New(dsn, client.Options{APIKey: o.APIKey, UserID: o.UserID}) // "": the key's own user
		if err != nil {
			return nil, err
		}
		return c.Agent(), nil
	}
	db, err := repository.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := schema(ctx, db, o.Migrate); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	if o.UserID == "" {
		o.UserID = "anonymous"
	}
	st, err := sessionstore.New(db, sessionstore.Options{UserID: o.UserID})
	if err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &embedded{st: st, db: db}, nil
}

// Library is a Store on a library store the caller made
// (sessionstore.New, for its other options); Close does not close its
// database.
func Library(st *sessionstore.Store) Store { return &embedded{st: st} }

// Sessions returns the library store behind st, for what an agent's turn
// does not need (listing, search, lifecycle, export); ok is false for a
// store on serve (package client has those calls).
func Sessions(st Store) (lib *sessionstore.Store, ok bool) {
	e, ok := st.(*embedded)
	if !ok {
		return nil, false
	}
	return e.st, true
}

// schema makes the tables of a database without them, upgrades them when
// asked, and refuses a database with pending upgrades otherwise.
func schema(ctx context.Context, db *repository.DB, upgrade bool) error {
	err := migrations.Check(ctx, db)
	if upgrade || errors.Is(err, repository.ErrNotMigrated) {
		return migrations.Up(ctx, db)
	}
	if err != nil {
		return err
	}
	states, err := migrations.Status(ctx, db)
	if err != nil {
		return err
	}
	pending := 0
	for _, s := range states {
		if !s.Applied {
			pending++
		}
	}
	if pending > 0 {
		return fmt.Errorf("the database's tables are older than this build (%d upgrades pending): run remstore migrate up, or open with Options.Migrate", pending)
	}
	return nil
}

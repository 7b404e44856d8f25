package sessionstore

import (
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/settings"
)

// Stores hands out the store of each tenant on one database with one set of
// options. A program builds it once from its settings ([FromSettings]) and
// every surface — CLI, HTTP API, viewer, MCP — takes its stores from it, so
// storage switched off is off everywhere and T is the same everywhere.
type Stores struct {
	db     *repository.DB
	o      Options
	turns  *turns // one line per session for all the tenants' stores
	secret *secretCache
}

// NewStores checks o (its UserID is ignored: [Stores.For] names the tenant)
// and returns the stores of db.
func NewStores(db *repository.DB, o Options) (*Stores, error) {
	c, err := o.compressor()
	if err != nil {
		return nil, err
	}
	o.UserID, o.TruncateLength = "", c.TruncateLength()
	return &Stores{db: db, o: o, turns: newTurns(), secret: &secretCache{}}, nil
}

// FromSettings is the one place settings become store options:
// REMSTORE_TRUNCATE_LENGTH is T, POSTGRES_ENABLED switches storage, the
// REMSTORE_MAX_* settings are the per-user limits.
func FromSettings(db *repository.DB, cfg settings.Config) (*Stores, error) {
	return NewStores(db, Options{TruncateLength: cfg.TruncateLength, Disabled: !cfg.StorageEnabled, Limits: LimitsOf(cfg)})
}

// LimitsOf is the per-user limits the settings set (REMSTORE_MAX_SESSION_MESSAGES,
// REMSTORE_MAX_SESSIONS): the stores' and an import's.
func LimitsOf(cfg settings.Config) Limits {
	return Limits{SessionMessages: cfg.MaxSessionMessages, Sessions: cfg.MaxSessions}
}

// For returns the store bound to tenant userID.
func (f *Stores) For(userID string) (*Store, error) {
	o := f.o
	o.UserID = userID
	return newStore(f.db, o, f.turns, f.secret)
}

// TruncateLength is T.
func (f *Stores) TruncateLength() int { return f.o.TruncateLength }

// DB is the database the stores run on.
func (f *Stores) DB() *repository.DB { return f.db }

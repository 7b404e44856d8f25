package sessionstore

import (
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"go.opentelemetry.io/otel/trace"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Store is the session message store bound to one user id, the tenant: it
// writes tenant_id = UserID and reads only that tenant's rows.
type Store struct {
	db      conn
	drv     driver
	sql     repository.SQL
	userID  string
	comp    *compressor.Compressor
	enabled bool
	now     func() time.Time
	retries int
	secret  *secretCache // the database's, shared by a Stores' stores (names.go)
	limits  Limits
	tracer  trace.Tracer
	// whole is rowsArgs.whole for loads: answers of up to this many bytes
	// come whole and are cut here (tests set 0: the database cuts all).
	whole int
	// byPosition has a compacted load find its rows by position even where
	// index ranges from the summary would do (tests set it: both must give
	// the same history).
	byPosition bool
}

// Options configures New.
type Options struct {
	// UserID is the tenant; required.
	UserID string
	// TruncateLength is T for load-time compression; 0 means 200.
	TruncateLength int
	// Disabled turns storage off (POSTGRES_ENABLED not true): storing returns
	// the messages unchanged, loading returns nothing, lookups find nothing.
	Disabled bool
	// Now is the clock for created_at; nil means time.Now.
	Now func() time.Time
	// Retries is how often a read (load, lookup) is retried after the
	// connection was lost, with exponential backoff from 50 ms; 0 means
	// DefaultRetries (3), a negative value none. Writes are retried only when
	// the request never reached the server.
	Retries int
	// Limits bound what the tenant can store (limits.go); zero: none.
	Limits Limits
	// TracerProvider receives the store's spans (tracing.go); nil means
	// OpenTelemetry's global provider.
	TracerProvider trace.TracerProvider
}

// compressor is the load-time compressor of T (0 means the default).
func (o Options) compressor() (*compressor.Compressor, error) {
	t := o.TruncateLength
	if t == 0 {
		t = compressor.DefaultTruncateLength
	}
	return compressor.New(t)
}

// New returns a store on db, which must be migrated (migrations.Up).
// [Store.InTx] gives the same store inside a caller's transaction.
func New(db *repository.DB, o Options) (*Store, error) {
	return newStore(db, o, newTurns(), &secretCache{})
}

func newStore(db *repository.DB, o Options, tr *turns, sec *secretCache) (*Store, error) {
	if err := checkID("user_id", o.UserID, models.MaxIDLen); err != nil {
		return nil, err
	}
	c, err := o.compressor()
	if err != nil {
		return nil, err
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	retries := o.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	return &Store{db: conn{IDB: db.DB, pool: db.Pool, loads: db.LoadPool, mode: db.HotExecMode, turns: tr}, drv: driverFor(db.Postgres()), sql: db.SQL(), userID: o.UserID, comp: c,
		enabled: !o.Disabled, now: now, retries: retries, secret: sec, limits: o.Limits, tracer: tracerOf(o.TracerProvider),
		whole: cutWholeBytes}, nil
}

// InTx returns the store with every call running inside tx, a transaction
// on the database the store was made on: a caller stores (or loads) as part
// of its own transaction, and the caller commits or rolls back.
func (s *Store) InTx(tx bun.Tx) *Store {
	c := *s
	c.db = conn{IDB: tx}
	return &c
}

// conn is where a call runs: bun (the database, or a transaction) and,
// outside a transaction on PostgreSQL, the pgx pool beneath it, which the
// hot reads use directly. Inside a transaction pool is nil and every read
// goes through the transaction.
type conn struct {
	bun.IDB
	pool *pgxpool.Pool
	// loads runs a load's rows on a generic plan (pgDriver.eachRow):
	// repository.DB.LoadPool, nil where there is none.
	loads *pgxpool.Pool
	// mode is how the hot reads send statements (repository.DB.HotExecMode).
	mode pgx.QueryExecMode
	// turns groups concurrent store calls into one session (turns.go):
	// shared by the stores of one Stores, one per store made by New.
	turns *turns
}

// inTx is the conn of a transaction.
func inTx(t bun.IDB) conn { return conn{IDB: t} }

// UserID returns the tenant the store is bound to.
func (s *Store) UserID() string { return s.userID }

// Enabled reports whether storage is on.
func (s *Store) Enabled() bool { return s.enabled }

// on refuses with ErrDisabled when storage is off: the operations beyond
// the Python service's store, load and lookup must not read or change what is stored.
func (s *Store) on() error {
	if !s.enabled {
		return ErrDisabled
	}
	return nil
}

// clock is the store's time, truncated to what the database keeps.
func (s *Store) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

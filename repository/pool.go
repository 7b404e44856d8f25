package repository

import (
	"database/sql"
	"database/sql/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// DefaultMaxConns bounds the connections one Open keeps to PostgreSQL
// unless the URL says otherwise (pool_max_conns=N). bun's queries and the
// store's hot reads share them.
const DefaultMaxConns = 32

// DB is what Open made: bun over database/sql for every query, and on
// PostgreSQL the pgx pool underneath it, which the store's hot reads and
// import's COPY use directly (no database/sql checkout or conversions). Both
// draw from the one pool; Close closes it. Callers pass a *DB explicitly:
// nothing finds the pool any other way.
type DB struct {
	*bun.DB
	// Pool is the pgx pool under DB on PostgreSQL; nil on SQLite.
	Pool *pgxpool.Pool
	// LoadPool runs only the store's rows statement, on generic plans
	// (loadPool); nil on SQLite, on Citus (its planner routes a statement
	// by the session it names, which a generic plan hides), behind a
	// transaction-mode pooler (a statement prepared by name may not be
	// there next time) and where the settings are refused at connection
	// (PgBouncer): loads then read through Pool with custom plans.
	LoadPool *pgxpool.Pool
	// Citus says the database has the citus extension, when it was opened
	// (or that Open could not tell): its planner routes a statement by the
	// session it names, which a generic plan of some statements hides from it.
	Citus bool
	// HotExecMode is how the store's hot reads send their statements on
	// the pool: pgx's statement cache (prepared once per connection) unless
	// the connection string's default_query_exec_mode chose another, as it
	// must behind a pooler in transaction mode (docs/operations.md).
	HotExecMode pgx.QueryExecMode
}

// NamedStatements reports whether statements may be prepared by name on a
// connection and used later: not behind a transaction-mode pooler.
func (d *DB) NamedStatements() bool { return d.HotExecMode == pgx.QueryExecModeCacheStatement }

// Postgres reports whether the database is PostgreSQL (or Citus).
func (d *DB) Postgres() bool { return d.Pool != nil }

// SQL returns the expressions of the database's dialect.
func (d *DB) SQL() SQL { return SQLFor(d.Postgres()) }

// poolDB puts database/sql in front of a pgx pool. Closing the *sql.DB
// closes the pool (sql.DB.Close calls its connector's Close), and every
// pool added to the connector's pools later.
func poolDB(pool *pgxpool.Pool) (*sql.DB, *poolConnector) {
	c := &poolConnector{Connector: stdlib.GetPoolConnector(pool), pools: []*pgxpool.Pool{pool}}
	db := sql.OpenDB(c)
	// Idle connections wait in the pool, where the hot path finds them too.
	db.SetMaxIdleConns(0)
	return db, c
}

type poolConnector struct {
	driver.Connector
	pools []*pgxpool.Pool
}

func (c *poolConnector) Close() error {
	for _, p := range c.pools {
		p.Close()
	}
	return nil
}

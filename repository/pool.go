package repository

import (
	"database/sql"
	"database/sql/driver"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// DefaultMaxConns bounds the connections one Open keeps to PostgreSQL
// unless the URL says otherwise (pool_max_conns=N). bun's queries and the
// store's hot reads share them.
const DefaultMaxConns = 32

// pools maps a *sql.DB that Open made to the pgx pool behind it.
var pools sync.Map

// openPool puts database/sql in front of a pgx pool: bun runs on the
// *sql.DB, and the store's hot reads (a key's probe, a load's statements)
// take a connection from the pool itself (Pool), skipping database/sql's
// checkout and conversions. Both draw from the one pool; closing the
// *sql.DB closes it.
func openPool(pool *pgxpool.Pool) *sql.DB {
	c := &poolConnector{Connector: stdlib.GetPoolConnector(pool), pool: pool}
	c.db = sql.OpenDB(c)
	// Idle connections wait in the pool, where the hot path finds them too.
	c.db.SetMaxIdleConns(0)
	pools.Store(c.db, pool)
	return c.db
}

// poolConnector closes the pool when database/sql closes the *sql.DB
// (sql.DB.Close calls a connector's Close).
type poolConnector struct {
	driver.Connector
	pool *pgxpool.Pool
	db   *sql.DB
}

func (c *poolConnector) Close() error {
	pools.Delete(c.db)
	c.pool.Close()
	return nil
}

// Pool returns the pgx pool behind a database Open made on PostgreSQL, or
// nil (SQLite, a *bun.DB built elsewhere, a transaction).
func Pool(db bun.IDB) *pgxpool.Pool {
	d, ok := db.(*bun.DB)
	if !ok {
		return nil
	}
	if p, ok := pools.Load(d.DB); ok {
		return p.(*pgxpool.Pool)
	}
	return nil
}

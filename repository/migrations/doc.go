// Package migrations brings a database to remstore's schema: the Python service's
// tables, remstore's indexes, the PostgreSQL store function and the tenant
// guard, each migration a pair of SQL files under sql/ read by bun's migrator.
//
//	err := migrations.Up(ctx, db)     // what a writing command runs first
//	err = migrations.Check(ctx, db)   // what a read-only command runs instead
//
// sql/postgres and sql/sqlite hold NAME_COMMENT.up.sql and .down.sql per
// dialect (statements separated by "--bun:split"; "--include FILE" reads
// another file, so a down step restores the old store function from its own
// file in sql/functions).
//
// Processes that migrate one database at once (replicas starting together)
// take turns under a lock of the database (lock.go): one migrates, the
// others wait for it, at most DefaultLockWait, then find nothing to do. A
// database with nothing to migrate takes no lock.
package migrations

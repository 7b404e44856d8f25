package sessionstore

import (
	"context"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
)

// sqliteDriver runs every call through bun. A store call is one transaction
// (a savepoint inside a caller's); SQLite's BEGIN IMMEDIATE (the _txlock
// Open sets) already serializes writers, so there is no lock to take.
type sqliteDriver struct{}

func (sqliteDriver) write(ctx context.Context, s *Store, db bun.IDB, p *writePlan) (writeOutcome, error) {
	var out writeOutcome
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		out, err = s.writeTx(ctx, tx, p)
		return err
	})
	return out, err
}

func (sqliteDriver) eachRow(ctx context.Context, db bun.IDB, q rowsArgs, fn func(storedRow) error) error {
	return eachRowSQL(ctx, db, q, fn)
}

func (sqliteDriver) queryRow(ctx context.Context, db bun.IDB, query string, args []any, dest ...any) error {
	return queryRowSQL(ctx, db, query, args, dest...)
}

func (sqliteDriver) lock(context.Context, bun.IDB, uuid.UUID) error { return nil }

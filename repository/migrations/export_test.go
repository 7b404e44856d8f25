package migrations

import (
	"context"

	"github.com/uptrace/bun/migrate"

	"github.com/remstore/remstore/repository"
)

// UpTo applies the pending migrations up to and including name, each in a
// group of its own, so that a rollback undoes exactly one (tests only).
func UpTo(ctx context.Context, db *repository.DB, name string) error {
	for _, m := range All().Sorted() {
		if m.Name > name {
			break
		}
		one := migrate.NewMigrations()
		for _, x := range All().Sorted() {
			if x.Name <= m.Name {
				one.Add(x)
			}
		}
		mg := migrate.NewMigrator(db.DB, one, migrate.WithTableName(Table), migrate.WithLocksTableName(LocksTable),
			migrate.WithMarkAppliedOnSuccess(true))
		if err := mg.Init(ctx); err != nil {
			return err
		}
		if _, err := mg.Migrate(ctx); err != nil {
			return err
		}
	}
	return nil
}

// HoldLock takes db's migration lock as a migrating process does and holds
// it until release is called; with claim, also bun's lock row, as a
// process does once bun's tables exist (tests only).
func HoldLock(ctx context.Context, db *repository.DB, claim bool) (release func() error, err error) {
	h, err := lock(ctx, db, Options{})
	if err != nil {
		return nil, err
	}
	if claim {
		if err := NewMigrator(db).Init(ctx); err != nil {
			_ = h.release()
			return nil, err
		}
		if err := h.claim(ctx); err != nil {
			_ = h.release()
			return nil, err
		}
	}
	return h.release, nil
}

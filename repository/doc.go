// Package repository opens the database (PostgreSQL through pgx, or the
// embedded SQLite file), migrates it to the peer's tables plus remstore's
// indexes and store function, and offers the generic [Repository] over bun.
//
//	db, err := repository.Open(ctx, "postgres://localhost/app") // or a SQLite path
//	err = repository.Migrate(ctx, db)                            // CheckMigrated for read-only use
//	msgs := repository.New[models.Message](db)                   // Upsert, Insert, Get, Find, Count, SoftDelete
//
// [SQL] holds the few expressions whose text differs between the two
// databases; the session store (package sessionstore) builds on these seams.
package repository

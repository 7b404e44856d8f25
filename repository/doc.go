// Package repository opens the database — PostgreSQL through a pgx pool, or
// the embedded SQLite file — and offers what every package above reads it
// with: the [DB] handle, the generic [Repository] over bun, the few SQL
// expressions that differ by dialect ([SQL]) and the driver errors translated.
//
//	db, err := repository.Open(ctx, "postgres://localhost/app") // or a SQLite path
//	err = migrations.Up(ctx, db)                                 // package repository/migrations
//	sessions := repository.New[table.Session](db.DB)            // Insert, Find, Count
//
// Migrations live in repository/migrations (SQL files), Citus administration
// in repository/citus.
package repository

package migrations

import (
	"context"
	"fmt"

	"github.com/remstore/remstore/repository"
)

// SearchIndex is the PostgreSQL index content search uses
// (sessionstore.Search): the words of each message's first 100,000
// characters under the 'simple' configuration (case folded, no stemming,
// built in: no extension). It is opt-in: on the 2-core benchmark machine it
// made a 4-message store 38% slower and a 100-message one 58% (1.08 → 1.49
// ms, 2.70 → 4.25 ms), a cost every write would pay for a debugging
// feature. Without it search reads every row of the table. SQLite's FTS5
// index (migration 9) is always there.
const SearchIndex = "remstore_messages_search"

const searchIndexSQL = `CREATE INDEX CONCURRENTLY IF NOT EXISTS ` + SearchIndex + ` ON messages
	USING gin (to_tsvector('simple'::regconfig, left(content, 100000)))`

// EnableSearch builds the search index without blocking writes (CREATE
// INDEX CONCURRENTLY, so never inside a transaction); a no-op on SQLite and
// where it exists. An index a failed concurrent build left invalid is
// dropped and built again.
func EnableSearch(ctx context.Context, db *repository.DB) error {
	if !db.Postgres() {
		return nil
	}
	var invalid bool
	if err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass(?) AND NOT indisvalid)`, SearchIndex).Scan(ctx, &invalid); err != nil {
		return fmt.Errorf("check the search index: %w", err)
	}
	if invalid {
		if _, err := db.ExecContext(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+SearchIndex); err != nil {
			return fmt.Errorf("drop the invalid search index: %w", err)
		}
	}
	if _, err := db.ExecContext(ctx, searchIndexSQL); err != nil {
		return fmt.Errorf("build the search index: %w", err)
	}
	return nil
}

// DisableSearch drops the search index (PostgreSQL; SQLite keeps its own).
func DisableSearch(ctx context.Context, db *repository.DB) error {
	if !db.Postgres() {
		return nil
	}
	if _, err := db.ExecContext(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+SearchIndex); err != nil {
		return fmt.Errorf("drop the search index: %w", err)
	}
	return nil
}

// SearchIndexed reports whether content search has its index.
func SearchIndexed(ctx context.Context, db *repository.DB) (bool, error) {
	if !db.Postgres() {
		return tableExists(ctx, db, "remstore_messages_fts")
	}
	var ok bool
	err := db.NewRaw(`SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indexrelid = to_regclass(?) AND i.indisvalid)`, SearchIndex).Scan(ctx, &ok)
	return ok, err
}

package migrations

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// SearchTriggers (re)makes the triggers on messages that note written rows
// for search's indexer (migration 16), of the kind the table allows: on
// PostgreSQL an insert or a delete is noted once per statement, from its
// transition table (a 100-message store pays one INSERT ... SELECT, not
// 100 trigger calls); a distributed table has no transition tables on
// Citus (a shard's trigger cannot read one), so there every row is noted
// by a row trigger. Updates are noted row by row on both, and only when
// what a search reads changed. Migration 16 calls it, and
// citus.Distribute and Undistribute when the table changes kind.
func SearchTriggers(ctx context.Context, db bun.IDB, distributed bool) error {
	stmts := []string{
		"DROP TRIGGER IF EXISTS remstore_search_insert ON messages",
		"DROP TRIGGER IF EXISTS remstore_search_delete ON messages",
		"DROP TRIGGER IF EXISTS remstore_search_update ON messages",
		`CREATE TRIGGER remstore_search_update AFTER UPDATE OF content, role, tenant_id, created_at, session_id ON messages FOR EACH ROW
			WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.role IS DISTINCT FROM NEW.role OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
				OR OLD.created_at IS DISTINCT FROM NEW.created_at OR OLD.session_id IS DISTINCT FROM NEW.session_id)
			EXECUTE FUNCTION remstore_search_note_row()`,
	}
	if distributed {
		stmts = append(stmts,
			`CREATE TRIGGER remstore_search_insert AFTER INSERT ON messages FOR EACH ROW EXECUTE FUNCTION remstore_search_note_row()`,
			`CREATE TRIGGER remstore_search_delete AFTER DELETE ON messages FOR EACH ROW EXECUTE FUNCTION remstore_search_note_row()`)
	} else {
		stmts = append(stmts,
			`CREATE TRIGGER remstore_search_insert AFTER INSERT ON messages REFERENCING NEW TABLE AS remstore_new_rows
				FOR EACH STATEMENT EXECUTE FUNCTION remstore_search_note_new()`,
			`CREATE TRIGGER remstore_search_delete AFTER DELETE ON messages REFERENCING OLD TABLE AS remstore_old_rows
				FOR EACH STATEMENT EXECUTE FUNCTION remstore_search_note_old()`)
	}
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("search triggers: %w", err)
		}
	}
	return nil
}

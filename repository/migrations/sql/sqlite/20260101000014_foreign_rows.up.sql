-- Rows another writer inserts (no metadata.entity_key) are added to the
-- session's kept count as they arrive, as on PostgreSQL (see its migration
-- 13 and functions/store_batch_v6.sql); the Go writer adds its own.
DROP TRIGGER IF EXISTS remstore_positions_foreign;
--bun:split
CREATE TRIGGER remstore_positions_foreign AFTER INSERT ON messages
WHEN NEW.tenant_id IS NOT NULL AND json_extract(NEW.metadata, '$.entity_key') IS NULL
BEGIN
	UPDATE remstore_positions SET n = n + 1 WHERE session_id = NEW.session_id AND tenant_id = NEW.tenant_id;
END;
--bun:split
DELETE FROM remstore_positions;

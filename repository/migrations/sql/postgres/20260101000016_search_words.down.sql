SET LOCAL citus.enable_unsafe_triggers TO on;
--bun:split
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--bun:split
DROP TRIGGER IF EXISTS remstore_search_insert ON messages;
--bun:split
DROP TRIGGER IF EXISTS remstore_search_delete ON messages;
--bun:split
DROP TRIGGER IF EXISTS remstore_search_update ON messages;
--bun:split
DROP FUNCTION IF EXISTS remstore_search_note_new();
--bun:split
DROP FUNCTION IF EXISTS remstore_search_note_old();
--bun:split
DROP FUNCTION IF EXISTS remstore_search_note_row();
--bun:split
DROP TABLE IF EXISTS remstore_search_docs;
--bun:split
DROP TABLE IF EXISTS remstore_search_queue;

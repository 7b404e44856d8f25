DROP INDEX IF EXISTS remstore_messages_compaction;
--bun:split
DROP INDEX IF EXISTS remstore_messages_unkeyed;

DROP INDEX IF EXISTS remstore_messages_session_order;
--bun:split
DROP INDEX IF EXISTS remstore_messages_entity_key;
--bun:split
DROP INDEX IF EXISTS remstore_sessions_updated;

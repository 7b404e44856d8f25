DROP TRIGGER IF EXISTS remstore_session_tenant ON sessions;
--bun:split
DROP TRIGGER IF EXISTS remstore_message_tenant_update ON messages;
--bun:split
DROP TRIGGER IF EXISTS remstore_message_tenant_insert ON messages;
--bun:split
DROP FUNCTION IF EXISTS remstore_guard_session_tenant();
--bun:split
DROP FUNCTION IF EXISTS remstore_guard_message_tenant_update();
--bun:split
DROP FUNCTION IF EXISTS remstore_guard_message_tenant_insert();

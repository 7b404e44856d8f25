-- The tenant guard (tenant_guard.go explains it); skipped on a distributed
-- database.
CREATE OR REPLACE FUNCTION remstore_guard_session_tenant() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	IF OLD.tenant_id IS NOT NULL AND NEW.tenant_id IS DISTINCT FROM OLD.tenant_id THEN
		RAISE EXCEPTION 'remstore tenant guard: session % belongs to another tenant; a session''s tenant never changes', OLD.id
			USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END
$fn$;
--bun:split
CREATE OR REPLACE FUNCTION remstore_guard_message_tenant_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
	v_tenant text;
BEGIN
	IF OLD.tenant_id IS NOT NULL AND NEW.tenant_id IS DISTINCT FROM OLD.tenant_id THEN
		RAISE EXCEPTION 'remstore tenant guard: message % belongs to another tenant; a message''s tenant never changes', OLD.id
			USING ERRCODE = 'check_violation';
	END IF;
	IF NEW.tenant_id IS NOT NULL AND NEW.session_id IS DISTINCT FROM OLD.session_id THEN
		SELECT s.tenant_id INTO v_tenant FROM sessions s WHERE s.id = NEW.session_id;
		IF v_tenant IS NOT NULL AND v_tenant <> NEW.tenant_id THEN
			RAISE EXCEPTION 'remstore tenant guard: session % belongs to another tenant', NEW.session_id
				USING ERRCODE = 'check_violation';
		END IF;
	END IF;
	RETURN NEW;
END
$fn$;
--bun:split
CREATE OR REPLACE FUNCTION remstore_guard_message_tenant_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
	v_session uuid;
BEGIN
	SELECT n.session_id INTO v_session FROM remstore_new_rows n JOIN sessions s ON s.id = n.session_id
	WHERE n.tenant_id IS NOT NULL AND s.tenant_id IS NOT NULL AND s.tenant_id <> n.tenant_id LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'remstore tenant guard: session % belongs to another tenant', v_session
			USING ERRCODE = 'check_violation';
	END IF;
	RETURN NULL;
END
$fn$;
--bun:split
DROP TRIGGER IF EXISTS remstore_session_tenant ON sessions;
--bun:split
CREATE TRIGGER remstore_session_tenant BEFORE UPDATE OF tenant_id ON sessions
	FOR EACH ROW EXECUTE FUNCTION remstore_guard_session_tenant();
--bun:split
DROP TRIGGER IF EXISTS remstore_message_tenant_update ON messages;
--bun:split
CREATE TRIGGER remstore_message_tenant_update BEFORE UPDATE OF tenant_id, session_id ON messages
	FOR EACH ROW EXECUTE FUNCTION remstore_guard_message_tenant_update();
--bun:split
DROP TRIGGER IF EXISTS remstore_message_tenant_insert ON messages;
--bun:split
CREATE TRIGGER remstore_message_tenant_insert AFTER INSERT ON messages
	REFERENCING NEW TABLE AS remstore_new_rows FOR EACH STATEMENT EXECUTE FUNCTION remstore_guard_message_tenant_insert();

package repository

// The tenant guard (migration 6, PostgreSQL): rules the database enforces
// for every writer, the peer included, where remstore's own writes already
// keep them. A session's or a message's tenant never changes once set, and
// no row goes into a session under another tenant: before it, the peer's
// upsert could hand alice's soft-deleted session to bob, and the peer let
// bob write his messages into alice's live one. Rows and sessions without a
// tenant (NULL: the peer's older rows) are left alone. The error is a
// check violation (23514) that names neither tenant.
//
// Not on Citus: a trigger on a distributed table would query another
// shard's table from a worker, and the peer cannot write to distributed
// tables anyway (interop/peer/test_citus.py); Distribute drops the guard
// and migration 6 skips a distributed database.

// TenantGuardTriggers are the guard's triggers, by table.
var TenantGuardTriggers = [][2]string{
	{"sessions", "remstore_session_tenant"},
	{"messages", "remstore_message_tenant_update"},
	{"messages", "remstore_message_tenant_insert"},
}

var tenantGuardDDL = []string{
	`CREATE OR REPLACE FUNCTION remstore_guard_session_tenant() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
	IF OLD.tenant_id IS NOT NULL AND NEW.tenant_id IS DISTINCT FROM OLD.tenant_id THEN
		RAISE EXCEPTION 'remstore tenant guard: session % belongs to another tenant; a session''s tenant never changes', OLD.id
			USING ERRCODE = 'check_violation';
	END IF;
	RETURN NEW;
END
$fn$`,
	`CREATE OR REPLACE FUNCTION remstore_guard_message_tenant_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
$fn$`,
	// Inserts (and COPY) are checked once per statement over the rows it
	// wrote: one semi-join, not a lookup per row.
	`CREATE OR REPLACE FUNCTION remstore_guard_message_tenant_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
$fn$`,
	`DROP TRIGGER IF EXISTS remstore_session_tenant ON sessions`,
	`CREATE TRIGGER remstore_session_tenant BEFORE UPDATE OF tenant_id ON sessions
	FOR EACH ROW EXECUTE FUNCTION remstore_guard_session_tenant()`,
	`DROP TRIGGER IF EXISTS remstore_message_tenant_update ON messages`,
	`CREATE TRIGGER remstore_message_tenant_update BEFORE UPDATE OF tenant_id, session_id ON messages
	FOR EACH ROW EXECUTE FUNCTION remstore_guard_message_tenant_update()`,
	`DROP TRIGGER IF EXISTS remstore_message_tenant_insert ON messages`,
	`CREATE TRIGGER remstore_message_tenant_insert AFTER INSERT ON messages
	REFERENCING NEW TABLE AS remstore_new_rows FOR EACH STATEMENT EXECUTE FUNCTION remstore_guard_message_tenant_insert()`,
}

// dropTenantGuardDDL undoes tenantGuardDDL.
func dropTenantGuardDDL() []string {
	var out []string
	for _, t := range TenantGuardTriggers {
		out = append(out, `DROP TRIGGER IF EXISTS `+t[1]+` ON `+t[0])
	}
	return append(out,
		`DROP FUNCTION IF EXISTS remstore_guard_session_tenant()`,
		`DROP FUNCTION IF EXISTS remstore_guard_message_tenant_update()`,
		`DROP FUNCTION IF EXISTS remstore_guard_message_tenant_insert()`)
}

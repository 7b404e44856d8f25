-- Load order is arrival order for other writers' rows too (issue 55, item 5).
-- The Python service stamps a row's created_at from its own clock before its
-- INSERT reaches the database. A row stamped before a store of remstore's but
-- inserted after it sorted before that store's rows in load order
-- (created_at, id) and moved their positions by one, away from the keys they
-- store (26 of 1,000 of remstore's rows with eight writers on each side):
-- migration 14's count takes the session's lock only after the row is in, and
-- cannot change where it sorts.
--
-- So before another writer's row (no metadata.entity_key) goes in, the
-- database takes the session's write lock, as a store does, and a row older
-- than the session's newest row goes just after it: 1 microsecond later,
-- each row of a multi-row INSERT after the one before (which it sees), so a
-- batch keeps its own order. Only within the race window: a row whose move
-- would exceed 10 seconds keeps its time (an import of old rows means it),
-- and is counted as before. updated_at follows when it would be earlier.
-- The cost is the lock and one probe of the (session_id, created_at, id)
-- index, as the store function reads the newest row. remstore's own rows
-- carry entity_key: the trigger's WHEN skips them without calling it.
--
-- Not on a distributed database (migrations.step skips this file; citus.
-- Distribute drops the trigger): a shard's trigger would read messages
-- through the coordinator's table, and the Python service cannot write to
-- distributed tables anyway (interop/peer/test_citus.py).
CREATE OR REPLACE FUNCTION remstore_order_foreign_row() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT SET plan_cache_mode = force_generic_plan SET enable_seqscan = off AS $fn$
DECLARE
	v_last timestamptz;
BEGIN
	-- The session's write lock, as a store takes it (sessionstore.lockKey,
	-- and migration 14's count of the row, which then finds it held).
	PERFORM pg_advisory_xact_lock(
		('x' || encode(substring(uuid_send(NEW.session_id) FROM 1 FOR 8), 'hex'))::bit(64)::bigint
		# ('x' || encode(substring(uuid_send(NEW.session_id) FROM 9 FOR 8), 'hex'))::bit(64)::bigint);
	-- The newest row, as the store function reads it: one index entry.
	SELECT m.created_at INTO v_last FROM messages m
	WHERE m.session_id = NEW.session_id AND m.created_at IS NOT NULL ORDER BY m.created_at DESC LIMIT 1;
	IF NEW.created_at <= v_last AND v_last + interval '1 microsecond' - NEW.created_at <= interval '10 seconds' THEN
		NEW.created_at := v_last + interval '1 microsecond';
		IF NEW.updated_at < NEW.created_at THEN
			NEW.updated_at := NEW.created_at;
		END IF;
	END IF;
	RETURN NEW;
END
$fn$;
--bun:split
DROP TRIGGER IF EXISTS remstore_order_foreign ON messages;
--bun:split
CREATE TRIGGER remstore_order_foreign BEFORE INSERT ON messages FOR EACH ROW
	WHEN (NEW.tenant_id IS NOT NULL AND NEW.created_at IS NOT NULL AND (NEW.metadata->>'entity_key') IS NULL)
	EXECUTE FUNCTION remstore_order_foreign_row();

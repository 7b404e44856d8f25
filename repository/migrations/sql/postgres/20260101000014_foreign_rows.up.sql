-- Keys stay load positions when another writer appends (issue 42, H4;
-- functions/store_batch_v6.sql, migration 13, says how): the database adds
-- each row another writer inserts (the Python service's rows carry no
-- metadata.entity_key) to the session's kept count as it arrives. remstore's
-- own rows are counted by the store function, so the trigger skips them and
-- costs them nothing. On Citus it runs on each messages shard and updates
-- the co-located shard of remstore_positions (allowed once told so).
SET LOCAL citus.enable_unsafe_triggers TO on;
--bun:split
-- One shard at a time: Citus runs no function command after a parallel
-- operation on a distributed table in the same transaction.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--bun:split
-- SET search_path FROM CURRENT: on a Citus worker the trigger runs in a
-- connection whose search_path may not name the tables' schema.
CREATE OR REPLACE FUNCTION remstore_count_foreign_row() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
	-- The session's write lock, as a store takes it (sessionstore.lockKey:
	-- the two halves of the id, XORed): a store never counts the session
	-- between this row's insert and its commit, and this row is added only
	-- after a store that began first has kept its count.
	PERFORM pg_advisory_xact_lock(
		('x' || encode(substring(uuid_send(NEW.session_id) FROM 1 FOR 8), 'hex'))::bit(64)::bigint
		# ('x' || encode(substring(uuid_send(NEW.session_id) FROM 9 FOR 8), 'hex'))::bit(64)::bigint);
	UPDATE remstore_positions SET n = n + 1 WHERE session_id = NEW.session_id AND tenant_id = NEW.tenant_id;
	RETURN NULL;
END
$fn$;
--bun:split
CREATE TRIGGER remstore_positions_foreign AFTER INSERT ON messages FOR EACH ROW
	WHEN (NEW.tenant_id IS NOT NULL AND (NEW.metadata->>'entity_key') IS NULL)
	EXECUTE FUNCTION remstore_count_foreign_row();
--bun:split
-- Counts kept before may have missed such rows: each session is counted once
-- more at its next store.
DELETE FROM remstore_positions;

SET LOCAL citus.enable_unsafe_triggers TO on;
--bun:split
-- One shard at a time: Citus runs no function command after a parallel
-- operation on a distributed table in the same transaction.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--bun:split
DROP TRIGGER IF EXISTS remstore_positions_foreign ON messages;
--bun:split
DROP FUNCTION IF EXISTS remstore_count_foreign_row();

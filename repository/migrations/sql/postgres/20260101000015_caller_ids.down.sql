-- One shard at a time: Citus runs no function command after a parallel
-- operation on a distributed table in the same transaction.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--bun:split
DROP TABLE IF EXISTS remstore_caller_ids;
--bun:split
--include functions/store_batch_v6.sql

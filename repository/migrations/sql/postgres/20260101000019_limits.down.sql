DROP FUNCTION IF EXISTS remstore_store_batch(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean, text, integer, integer);
--bun:split
--include functions/store_batch_v7.sql

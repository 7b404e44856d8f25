-- The store function returns the keys it wrote (a new result column, so the
-- function is dropped and made again; a distributed database has it
-- distributed again, by migrations.go).
DROP FUNCTION IF EXISTS remstore_store_batch(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean);
--bun:split
--include functions/store_batch_v2.sql

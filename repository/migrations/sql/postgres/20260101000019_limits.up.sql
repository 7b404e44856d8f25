-- Per-user limits checked where the rows are written (functions/store_batch_v8.sql):
-- the store function takes the limits and refuses a call past one in the
-- same statement that writes, under the locks that order concurrent calls.
-- The old signature goes first: added parameters make another function.
DROP FUNCTION IF EXISTS remstore_store_batch(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean, text);
--bun:split
--include functions/store_batch_v8.sql

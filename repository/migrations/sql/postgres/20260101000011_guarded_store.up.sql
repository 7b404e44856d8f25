-- Guarded stores (functions/store_batch_v5.sql): the store function takes
-- the last message its caller saw and answers the session's last message.
-- The old signature goes first: an added parameter is another function.
DROP FUNCTION IF EXISTS remstore_store_batch(uuid, bigint, text, text, text, timestamptz, jsonb, boolean, boolean);
--bun:split
--include functions/store_batch_v5.sql

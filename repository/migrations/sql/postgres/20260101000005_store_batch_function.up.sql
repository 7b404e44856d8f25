-- remstore_store_batch replaces migration 3's function: it also takes caller
-- ids, checks the session's tenant and writes lifecycle messages.
DROP FUNCTION IF EXISTS remstore_store_messages(uuid, bigint, text, text, text, timestamptz, jsonb);
--bun:split
--include functions/store_batch_v1.sql

DROP FUNCTION IF EXISTS remstore_store_messages(uuid, bigint, text, text, text, timestamptz, jsonb);

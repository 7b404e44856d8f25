DROP TRIGGER IF EXISTS remstore_messages_fts_au;
--bun:split
DROP TRIGGER IF EXISTS remstore_messages_fts_ad;
--bun:split
DROP TRIGGER IF EXISTS remstore_messages_fts_ai;
--bun:split
DROP TABLE IF EXISTS remstore_messages_fts;

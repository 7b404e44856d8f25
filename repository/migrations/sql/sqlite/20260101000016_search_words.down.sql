DROP TRIGGER IF EXISTS remstore_search_ai;
--bun:split
DROP TRIGGER IF EXISTS remstore_search_ad;
--bun:split
DROP TRIGGER IF EXISTS remstore_search_au;
--bun:split
DROP TABLE IF EXISTS remstore_search;
--bun:split
--include sqlite/20260101000009_search.up.sql

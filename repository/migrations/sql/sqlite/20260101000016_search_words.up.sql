-- Search under one rule of what a word is (issue 41, internal/words): the
-- FTS5 index keeps each message's words as remstore_words() gives them, a
-- function remstore registers in Go on every SQLite connection, and the
-- 'ascii' tokenizer only splits them at the spaces between them
-- (non-ASCII characters are word characters to it, and the words hold no
-- other separator). Contentless: the words are not stored twice, and a row
-- is deleted by its rowid.
DROP TRIGGER IF EXISTS remstore_messages_fts_ai;
--bun:split
DROP TRIGGER IF EXISTS remstore_messages_fts_ad;
--bun:split
DROP TRIGGER IF EXISTS remstore_messages_fts_au;
--bun:split
DROP TABLE IF EXISTS remstore_messages_fts;
--bun:split
CREATE VIRTUAL TABLE IF NOT EXISTS remstore_search USING fts5(words, content='', contentless_delete=1, tokenize='ascii');
--bun:split
INSERT INTO remstore_search(rowid, words) SELECT rowid, remstore_words(content) FROM messages;
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_search_ai AFTER INSERT ON messages BEGIN
	INSERT INTO remstore_search(rowid, words) VALUES (new.rowid, remstore_words(new.content));
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_search_ad AFTER DELETE ON messages BEGIN
	DELETE FROM remstore_search WHERE rowid = old.rowid;
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_search_au AFTER UPDATE OF content ON messages BEGIN
	DELETE FROM remstore_search WHERE rowid = old.rowid;
	INSERT INTO remstore_search(rowid, words) VALUES (new.rowid, remstore_words(new.content));
END;

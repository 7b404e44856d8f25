-- Content search on the embedded default: an FTS5 index over messages'
-- content (external content: the text is not stored twice), kept by
-- triggers, filled once from the rows already there. unicode61 folds case
-- and diacritics, as PostgreSQL's 'simple' configuration folds case.
CREATE VIRTUAL TABLE IF NOT EXISTS remstore_messages_fts USING fts5(content, content='messages', content_rowid='rowid', tokenize='unicode61');
--bun:split
INSERT INTO remstore_messages_fts(remstore_messages_fts) VALUES ('rebuild');
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_messages_fts_ai AFTER INSERT ON messages BEGIN
	INSERT INTO remstore_messages_fts(rowid, content) VALUES (new.rowid, new.content);
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_messages_fts_ad AFTER DELETE ON messages BEGIN
	INSERT INTO remstore_messages_fts(remstore_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
--bun:split
CREATE TRIGGER IF NOT EXISTS remstore_messages_fts_au AFTER UPDATE OF content ON messages BEGIN
	INSERT INTO remstore_messages_fts(remstore_messages_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
	INSERT INTO remstore_messages_fts(rowid, content) VALUES (new.rowid, new.content);
END;

-- Content search (the viewer's, sessionstore.Search): the words of each
-- message's first 100,000 characters, case-folded by the 'simple'
-- configuration (no stemming, no stop words: any language, and a word
-- typed is the word found). Built-in full text: no extension to install.
-- The index is made with the table locked for writes: on a large existing
-- table run `migrate up` at a quiet time (docs/operations.md).
CREATE INDEX IF NOT EXISTS remstore_messages_search ON messages
	USING gin (to_tsvector('simple'::regconfig, left(content, 100000)));

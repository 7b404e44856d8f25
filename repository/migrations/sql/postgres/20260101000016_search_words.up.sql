-- Search by default (issue 41): each message's words are kept in
-- remstore_search_docs under one rule (internal/words), indexed by GIN, so
-- a search needs no opt-in step. What a word is cannot be decided in SQL
-- the way Go decides it, so the words are written by remstore's indexer
-- (sessionstore.IndexSearch: serve runs it in the background, a search
-- catches up first), not by the write path: a write only notes which
-- message to (re)index in remstore_search_queue, one row per message, from
-- a trigger that fires once per statement (once per row on Citus). Any writer's rows are noted,
-- the Python service's too. On Citus both tables are distributed by
-- session, co-located with messages, and the triggers run on each shard.
SET LOCAL citus.enable_unsafe_triggers TO on;
--bun:split
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--bun:split
-- A message outside a session is found by no search (search reads it
-- through its session), and is not noted.
CREATE TABLE IF NOT EXISTS remstore_search_queue (
	session_id uuid NOT NULL,
	message_id uuid NOT NULL)
--bun:split
CREATE INDEX IF NOT EXISTS remstore_search_queue_message ON remstore_search_queue (session_id, message_id)
--bun:split
-- A message may be noted twice (no key): Citus moves a shard of a table
-- without a key by whole rows.
ALTER TABLE remstore_search_queue REPLICA IDENTITY FULL
--bun:split
CREATE TABLE IF NOT EXISTS remstore_search_docs (
	session_id uuid NOT NULL,
	message_id uuid NOT NULL,
	tenant_id text NOT NULL,
	role text NOT NULL,
	created_at timestamptz,
	words tsvector NOT NULL,
	CONSTRAINT remstore_search_docs_pkey PRIMARY KEY (session_id, message_id))
--bun:split
CREATE INDEX IF NOT EXISTS remstore_search_docs_words ON remstore_search_docs USING gin (words)
--bun:split
-- The newest first, per tenant: a word in many messages is found by
-- walking back from the newest, not by fetching every match.
CREATE INDEX IF NOT EXISTS remstore_search_docs_recent ON remstore_search_docs (tenant_id, created_at DESC, message_id DESC)
--bun:split
CREATE OR REPLACE FUNCTION remstore_search_note_new() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
	INSERT INTO remstore_search_queue (session_id, message_id) SELECT session_id, id FROM remstore_new_rows WHERE session_id IS NOT NULL;
	RETURN NULL;
END
$fn$
--bun:split
CREATE OR REPLACE FUNCTION remstore_search_note_old() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
	INSERT INTO remstore_search_queue (session_id, message_id) SELECT session_id, id FROM remstore_old_rows WHERE session_id IS NOT NULL;
	RETURN NULL;
END
$fn$
--bun:split
-- Row by row, where a distributed table allows no transition table
-- (Citus), and for updates everywhere. Both ends of a row that moved.
CREATE OR REPLACE FUNCTION remstore_search_note_row() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
BEGIN
	IF TG_OP <> 'INSERT' AND OLD.session_id IS NOT NULL THEN
		INSERT INTO remstore_search_queue (session_id, message_id) VALUES (OLD.session_id, OLD.id);
	END IF;
	IF TG_OP <> 'DELETE' AND NEW.session_id IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.session_id IS DISTINCT FROM NEW.session_id) THEN
		INSERT INTO remstore_search_queue (session_id, message_id) VALUES (NEW.session_id, NEW.id);
	END IF;
	RETURN NULL;
END
$fn$
--bun:split
-- The triggers themselves are made by migrations.SearchTriggers after
-- this file: their kind depends on whether messages is distributed.
-- The rows already there are indexed by the indexer's first runs.
INSERT INTO remstore_search_queue (session_id, message_id) SELECT session_id, id FROM messages WHERE session_id IS NOT NULL
--bun:split
-- The opt-in index of before made every write dearer (+38% a 4-message
-- store); search no longer reads it.
DROP INDEX IF EXISTS remstore_messages_search

-- The rare rows a streaming load must know about before it starts, so that
-- finding them is a probe, not a pass over every row's metadata; both are
-- empty for a session only remstore wrote.
CREATE INDEX IF NOT EXISTS remstore_messages_compaction ON messages (session_id, created_at, id) WHERE json_extract(metadata, '$.compaction') = 1;
--bun:split
CREATE INDEX IF NOT EXISTS remstore_messages_unkeyed ON messages (session_id) WHERE (json_extract(metadata, '$.entity_key')) IS NULL;

-- Indexes only: never a constraint that could reject a row the peer writes.
-- The entity-key index is on exactly the expression lookups query
-- (repository.SQL.EntityKey), or the planner would not use it.
CREATE INDEX IF NOT EXISTS remstore_messages_session_order ON messages (session_id, created_at, id);
--bun:split
CREATE INDEX IF NOT EXISTS remstore_messages_entity_key ON messages ((metadata->>'entity_key'));
--bun:split
CREATE INDEX IF NOT EXISTS remstore_sessions_updated ON sessions (updated_at, id);

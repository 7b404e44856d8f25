-- The peer's tables, column for column (SPEC §2). IF NOT EXISTS makes this a
-- no-op on a database the peer already created, with or without its pgvector
-- embedding column: no column is changed.
CREATE TABLE IF NOT EXISTS sessions (
	id UUID PRIMARY KEY,
	name VARCHAR(512),
	description TEXT,
	agent_name VARCHAR(256),
	status VARCHAR(64) DEFAULT 'active',
	graph_edges JSONB DEFAULT '[]'::jsonb,
	metadata JSONB DEFAULT '{}'::jsonb,
	tags TEXT[] DEFAULT '{}',
	user_id VARCHAR(256),
	tenant_id VARCHAR(256),
	created_at TIMESTAMPTZ DEFAULT NOW(),
	updated_at TIMESTAMPTZ DEFAULT NOW(),
	deleted_at TIMESTAMPTZ);
--bun:split
CREATE TABLE IF NOT EXISTS messages (
	id UUID PRIMARY KEY,
	session_id UUID REFERENCES sessions(id) ON DELETE CASCADE,
	role VARCHAR(64) NOT NULL,
	content TEXT NOT NULL,
	tool_calls JSONB DEFAULT '[]'::jsonb,
	graph_edges JSONB DEFAULT '[]'::jsonb,
	metadata JSONB DEFAULT '{}'::jsonb,
	tags TEXT[] DEFAULT '{}',
	trace_id VARCHAR(256),
	span_id VARCHAR(256),
	user_id VARCHAR(256),
	tenant_id VARCHAR(256),
	created_at TIMESTAMPTZ DEFAULT NOW(),
	updated_at TIMESTAMPTZ DEFAULT NOW(),
	deleted_at TIMESTAMPTZ);

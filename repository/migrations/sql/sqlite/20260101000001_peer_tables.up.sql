-- SQLite has no JSONB, TEXT[] or UUID: the peer's columns as TEXT, holding
-- the JSON text, the PostgreSQL array literal and the UUID string.
CREATE TABLE IF NOT EXISTS sessions (
	id TEXT PRIMARY KEY,
	name VARCHAR(512),
	description TEXT,
	agent_name VARCHAR(256),
	status VARCHAR(64) DEFAULT 'active',
	graph_edges TEXT DEFAULT '[]',
	metadata TEXT DEFAULT '{}',
	tags TEXT DEFAULT '{}',
	user_id VARCHAR(256),
	tenant_id VARCHAR(256),
	created_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
	updated_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
	deleted_at TIMESTAMPTZ);
--bun:split
CREATE TABLE IF NOT EXISTS messages (
	id TEXT PRIMARY KEY,
	session_id TEXT REFERENCES sessions(id) ON DELETE CASCADE,
	role VARCHAR(64) NOT NULL,
	content TEXT NOT NULL,
	tool_calls TEXT DEFAULT '[]',
	graph_edges TEXT DEFAULT '[]',
	metadata TEXT DEFAULT '{}',
	tags TEXT DEFAULT '{}',
	trace_id VARCHAR(256),
	span_id VARCHAR(256),
	user_id VARCHAR(256),
	tenant_id VARCHAR(256),
	created_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
	updated_at TIMESTAMPTZ DEFAULT CURRENT_TIMESTAMP,
	deleted_at TIMESTAMPTZ);

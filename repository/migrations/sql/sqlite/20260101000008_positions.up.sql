-- Each tenant's count of rows per session, kept by the Go writer so that a
-- store does not count the session (sessionstore/driver_sqlite.go; the same
-- rule as the PostgreSQL store function, functions/store_batch_v3.sql).
CREATE TABLE IF NOT EXISTS remstore_positions (
	session_id TEXT NOT NULL,
	tenant_id TEXT NOT NULL,
	n INTEGER NOT NULL,
	last_id TEXT NOT NULL,
	PRIMARY KEY (session_id, tenant_id)
);

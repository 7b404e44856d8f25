-- A turn's cost flat in session length: the store function keeps each
-- tenant's count of rows per session here instead of counting the session
-- on every write (functions/store_batch_v3.sql says how). Only remstore reads
-- and writes this table; it is derived state, and a missing or stale row is
-- made good by counting the session once.
CREATE TABLE IF NOT EXISTS remstore_positions (
	session_id uuid NOT NULL,
	tenant_id varchar(256) NOT NULL,
	n bigint NOT NULL,
	last_id uuid NOT NULL,
	PRIMARY KEY (session_id, tenant_id)
);
--bun:split
--include functions/store_batch_v3.sql

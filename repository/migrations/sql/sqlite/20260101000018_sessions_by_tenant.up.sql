-- A tenant's sessions by tenant: the per-user limit of sessions counts them
-- (sessionstore/limits.go) when a write would make one, a probe of this
-- index instead of a read of every tenant's sessions.
CREATE INDEX IF NOT EXISTS remstore_sessions_tenant ON sessions (tenant_id);

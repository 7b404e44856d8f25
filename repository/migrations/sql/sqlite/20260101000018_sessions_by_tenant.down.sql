DROP INDEX IF EXISTS remstore_sessions_tenant;

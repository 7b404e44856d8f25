-- A secret of this database (sessionstore/names.go): a session name's
-- second id and the ids of messages stored under an Idempotency-Key are
-- derived from it, so that no tenant can compute them and take them first.
-- gen_random_uuid draws from the server's strong random source; two make
-- 244 random bits. Only remstore reads it; the Python service never does.
CREATE TABLE IF NOT EXISTS remstore_secrets (
	name varchar(64) PRIMARY KEY,
	value text NOT NULL
);
--bun:split
INSERT INTO remstore_secrets (name, value)
VALUES ('derive', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''))
ON CONFLICT (name) DO NOTHING;

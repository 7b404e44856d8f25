-- A secret of this database (sessionstore/names.go; see the PostgreSQL
-- migration). randomblob draws from SQLite's generator, seeded by the
-- operating system's random source.
CREATE TABLE IF NOT EXISTS remstore_secrets (
	name varchar(64) PRIMARY KEY,
	value text NOT NULL
);
--bun:split
INSERT OR IGNORE INTO remstore_secrets (name, value) VALUES ('derive', lower(hex(randomblob(32))));

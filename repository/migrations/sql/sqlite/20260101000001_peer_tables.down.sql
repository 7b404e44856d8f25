-- Drops the tables and every message in them: for throwaway databases. On a
-- peer's database, never roll back past 2.
DROP TABLE IF EXISTS messages;
--bun:split
DROP TABLE IF EXISTS sessions;

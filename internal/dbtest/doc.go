// Package dbtest gives each test its own freshly migrated database on a real
// server: a new PostgreSQL schema (dropped afterwards) or a new SQLite file.
// The PostgreSQL server comes from REMSTORE_TEST_DATABASE_URL, which
// scripts/test.sh sets after starting a throwaway cluster.
package dbtest

// Package words is the one rule of what a word is for search, on every
// database: the indexer of PostgreSQL, SQLite's index function and the
// query all split text here, so the same words find the same messages.
package words

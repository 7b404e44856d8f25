package repository

import (
	"strconv"
	"strings"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
)

// SQL holds the few expressions whose text differs between PostgreSQL and
// SQLite. Queries and the indexes that serve them use exactly these texts:
// an expression index is used only when the query repeats its expression.
type SQL struct {
	Postgres bool
	// EntityKey is metadata.entity_key as text.
	EntityKey string
	// Compaction selects compaction summaries (metadata.compaction = true).
	Compaction string
	// Unkeyed selects rows without a stored key (the Python service's).
	Unkeyed string
	// Head and Tail are the first and last @cut code points of content
	// (a Named statement's parameter), Length
	// its length in code points: a long answer is cut on the server, so its
	// middle never crosses the wire (PostgreSQL's left/right/char_length in a
	// UTF-8 database and SQLite's substr/length on TEXT count code points).
	Head, Tail, Length string
	// Least is the smaller of two values (PostgreSQL's LEAST, SQLite's
	// two-argument MIN).
	Least string
	// Bytes is content's length in bytes, which a database knows without
	// reading the text: no text of at most N bytes has more than N code
	// points, so Length is computed only where Bytes exceeds the limit.
	Bytes string
}

var (
	pgSQL = SQL{
		Postgres:   true,
		EntityKey:  "metadata->>'entity_key'",
		Compaction: "(metadata->>'compaction') = 'true'",
		Unkeyed:    "(metadata->>'entity_key') IS NULL",
		Head:       "left(content, @cut)",
		Tail:       "right(content, @cut)",
		Length:     "char_length(content)",
		Bytes:      "octet_length(content)",
		Least:      "LEAST",
	}
	liteSQL = SQL{
		EntityKey:  "json_extract(metadata, '$.entity_key')",
		Compaction: "json_extract(metadata, '$.compaction') = 1",
		Unkeyed:    "(json_extract(metadata, '$.entity_key')) IS NULL",
		Head:       "substr(content, 1, @cut)",
		Tail:       "substr(content, -@cut)",
		Length:     "length(content)",
		Bytes:      "length(CAST(content AS BLOB))",
		Least:      "MIN",
	}
)

// SQLFor returns the expressions for PostgreSQL (pg) or SQLite.
func SQLFor(pg bool) SQL {
	if pg {
		return pgSQL
	}
	return liteSQL
}

// IsPostgres reports whether db speaks PostgreSQL.
func IsPostgres(db bun.IDB) bool { return db.Dialect().Name() == dialect.PG }

// Numbered rewrites a query written with ? placeholders into PostgreSQL's
// $1, $2, ... so that one text serves bun (either dialect) and pgx's
// statement cache. The queries it is used on contain no other '?'.
func Numbered(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

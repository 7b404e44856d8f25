package repository

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // pure-Go SQLite driver: no cgo needed for the default store

	"github.com/remstore/remstore/settings"
)

// Open connects to a postgres:// URL or opens (creating it and its directory)
// the SQLite file at any other path, and checks that the database answers.
// Errors wrap ErrUnavailable and never include a password.
func Open(ctx context.Context, dbURL string) (*bun.DB, error) { return OpenWith(ctx, dbURL, nil) }

// OpenWith is Open with a hook to adjust the pgx configuration of a
// PostgreSQL connection (a query tracer in tests, say); nil leaves it as is.
func OpenWith(ctx context.Context, dbURL string, configure func(*pgx.ConnConfig)) (*bun.DB, error) {
	if err := settings.ValidateDatabaseURL(dbURL); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var db *bun.DB
	if settings.IsPostgres(dbURL) {
		cfg, err := pgx.ParseConfig(dbURL)
		if err != nil {
			return nil, fmt.Errorf("%w: invalid PostgreSQL URL %s", ErrUnavailable, settings.MaskURL(dbURL))
		}
		// bun inlines every value into the SQL text, so the texts never
		// repeat; pgx's default statement cache would prepare each one (an
		// extra round trip per query). The simple protocol sends the text once.
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		if cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = 10 * time.Second
		}
		if configure != nil {
			configure(cfg)
		}
		sqldb := stdlib.OpenDB(*cfg)
		sqldb.SetMaxIdleConns(4)
		db = bun.NewDB(sqldb, pgdialect.New())
	} else {
		path := strings.TrimPrefix(dbURL, "file:")
		if path != ":memory:" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, fmt.Errorf("%w: create directory for %s: %v", ErrUnavailable, path, err)
			}
		}
		// WAL lets readers run beside the writer; _txlock=immediate takes
		// the write lock at BEGIN so two writers queue instead of failing
		// half-way; busy_timeout makes other processes wait for it.
		dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		sqldb, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("%w: open %s: %v", ErrUnavailable, path, err)
		}
		// One connection: SQLite has one writer anyway, and it makes
		// ":memory:" one database rather than one per connection.
		sqldb.SetMaxOpenConns(1)
		db = bun.NewDB(sqldb, sqlitedialect.New())
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrUnavailable, settings.MaskURL(dbURL), firstLine(err.Error()))
	}
	return db, nil
}

// IsPostgres reports whether db speaks PostgreSQL.
func IsPostgres(db bun.IDB) bool { return db.Dialect().Name() == dialect.PG }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

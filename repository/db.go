package repository

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/dialect/sqlitedialect"
	_ "modernc.org/sqlite" // pure-Go SQLite driver: no cgo needed for the default store

	"github.com/remstore/remstore/settings"
)

// Open connects to a postgres:// URL or opens the SQLite file at any other
// path (creating the file, not its directory), and checks that the database
// answers. Errors wrap ErrUnavailable and never include a password.
func Open(ctx context.Context, dbURL string) (*DB, error) { return OpenWith(ctx, dbURL, Options{}) }

// Options adjust OpenWith. The zero value is Open.
type Options struct {
	// Configure adjusts the pgx configuration of a PostgreSQL connection
	// (a query tracer in tests, say); nil leaves it as is.
	Configure func(*pgx.ConnConfig)
	// ReadOnly never creates anything: a SQLite file that does not exist is
	// ErrNotMigrated instead of a new empty database.
	ReadOnly bool
	// CreateDir creates the SQLite file's missing directory. Only the
	// embedded default path asks for it; a path the user typed must exist.
	CreateDir bool
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dbURL string, o Options) (*DB, error) {
	configure := o.Configure
	if err := settings.ValidateDatabaseURL(dbURL); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var db *bun.DB
	var pool *pgxpool.Pool
	var pcfg *pgxpool.Config
	var connector *poolConnector
	hotMode := pgx.QueryExecModeCacheStatement
	if settings.IsPostgres(dbURL) {
		// pgxpool's parser also takes pool_max_conns and the other pool_*
		// parameters out of the URL; pgx's alone would send them to the server.
		var err error
		pcfg, err = pgxpool.ParseConfig(dbURL)
		if err != nil {
			// pgx's message may quote the string, password and all.
			return nil, fmt.Errorf("%w: invalid PostgreSQL connection string %s", ErrUnavailable, settings.MaskURL(dbURL))
		}
		cfg := pcfg.ConnConfig
		// The hot reads prepare their statements once per connection
		// (pgx's statement cache), unless the connection string chose
		// another default_query_exec_mode: a pooler in transaction mode
		// (PgBouncer before 1.21) hands each transaction any server
		// connection, where a named statement may not exist.
		hotMode = cfg.DefaultQueryExecMode
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
		if !strings.Contains(dbURL, "pool_max_conns") {
			pcfg.MaxConns = DefaultMaxConns
		}
		pool, err = newPool(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %s", ErrUnavailable, settings.MaskURL(dbURL), connectError(err))
		}
		var sqldb *sql.DB
		sqldb, connector = poolDB(pool)
		db = bun.NewDB(sqldb, pgdialect.New())
	} else {
		path := strings.TrimPrefix(dbURL, "file:")
		if path != ":memory:" {
			if err := sqlitePath(path, o); err != nil {
				return nil, err
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
		return nil, fmt.Errorf("%w: %s: %s", ErrUnavailable, settings.MaskURL(dbURL), connectError(err))
	}
	out := &DB{DB: db, Pool: pool, HotExecMode: hotMode}
	if pool != nil {
		// Where the check itself fails (a statement_timeout of a
		// millisecond, say), the database is taken for Citus: what that
		// changes (custom plans for loads) is right on every database.
		if err := pool.QueryRow(pctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')").Scan(&out.Citus); err != nil {
			out.Citus = true
		}
		if !out.Citus && out.NamedStatements() {
			if out.LoadPool = loadPool(pctx, pcfg); out.LoadPool != nil {
				connector.pools = append(connector.pools, out.LoadPool)
			}
		}
	}
	return out, nil
}

// newPool opens the pool with JIT off on its connections: every statement
// remstore sends reads a session's index range, and where a big session
// made the planner's estimate cross jit_above_cost, compiling took most of
// the statement (a compacted load of a 1,000,000-message session: 20 ms,
// against 1 ms at 100,000). A pooler that refuses the startup parameter
// (PgBouncer: "unsupported startup parameter") gets the pool without it;
// any other failure is left to the caller's first use to report.
func newPool(ctx context.Context, cfg *pgxpool.Config) (*pgxpool.Pool, error) {
	c := cfg.Copy()
	c.ConnConfig.RuntimeParams["jit"] = "off"
	p, err := pgxpool.NewWithConfig(ctx, c)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := p.Ping(pctx); err != nil && strings.Contains(err.Error(), "unsupported startup parameter") {
		p.Close()
		return pgxpool.NewWithConfig(ctx, cfg)
	}
	return p, nil
}

// loadPool makes DB.LoadPool from the main pool's configuration: its
// connections start with plan_cache_mode = force_generic_plan and jit =
// off as their session defaults, so the rows statement is prepared and
// planned once per connection and each load is that one statement (setting
// and resetting them around it cost a sixth of a 10-message load). JIT is
// off because a generic plan's cost is estimated for the average session:
// on a table holding a million-row session it crossed jit_above_cost, and
// JIT compiled on every call (13.5 ms a 10-message load). Half as many
// connections as the main pool at most.
//
// Its first connection is made here: a pooler in front of the server
// (PgBouncer: "unsupported startup parameter: plan_cache_mode") or a server
// before PostgreSQL 12 refuses the settings, and then there is no load
// pool (nil): loads plan per call on the main pool, as on Citus.
func loadPool(ctx context.Context, main *pgxpool.Config) *pgxpool.Pool {
	c := main.Copy()
	c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	c.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	c.ConnConfig.RuntimeParams["jit"] = "off"
	c.MaxConns = max(1, main.MaxConns/2)
	c.MinConns, c.MinIdleConns = 0, 0
	p, err := pgxpool.NewWithConfig(ctx, c)
	if err != nil {
		return nil
	}
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil
	}
	return p
}

// oneLine joins a multi-line driver error into one line: pgx puts the reason
// a connection failed (refused, no such database, authentication) after a
// newline, and the first line alone ends at a colon.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// connectError is a failed connection's error as users read it: pgx lists
// one reason per attempt (sslmode=prefer tries TLS, then plain), so each
// distinct reason is said once, a TLS refusal only when no plain attempt
// says more, hostname resolving's own echo dropped; then what to check.
func connectError(err error) string {
	lines := strings.Split(err.Error(), "\n")
	head := strings.TrimSuffix(strings.TrimSpace(lines[0]), ":")
	var reasons []string
	seen := map[string]bool{}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		reasons = append(reasons, l)
	}
	if len(reasons) > 1 {
		kept := reasons[:0]
		for _, r := range reasons {
			if strings.Contains(r, "server refused TLS") || strings.Contains(r, "tls error") {
				continue
			}
			kept = append(kept, r)
		}
		if len(kept) > 0 {
			reasons = kept
		}
	}
	// "hostname resolving error: lookup X: no such host" is followed by the
	// bare "lookup X: no such host": keep the first.
	if len(reasons) == 2 && strings.HasSuffix(reasons[0], reasons[1]) {
		reasons = reasons[:1]
	}
	msg := head
	if len(reasons) > 0 {
		msg += ": " + strings.Join(reasons, "; ")
	}
	msg = oneLine(msg)
	if h := connectHint(msg); h != "" {
		msg += " (" + h + ")"
	}
	return msg
}

const noAnswer = "the server did not answer in time: check the address, a firewall, or REMSTORE_CONNECT_TIMEOUT"

// connectHint is what to check for a connection error, by what it says.
func connectHint(msg string) string {
	for _, h := range []struct{ says, hint string }{
		{"unsupported startup parameter", "a pooler such as PgBouncer refuses it: set it on the role (ALTER ROLE ... SET) or in its ignore_startup_parameters; docs/operations.md"},
		{"no such host", "check the host name in the connection string"},
		{"connection refused", "is PostgreSQL running and listening there? pg_isready -h HOST -p PORT tells"},
		{"connect: no such file or directory", "no server socket in that directory: is PostgreSQL running, and is host= its socket directory?"},
		{"password authentication failed", "check the user name and the password"},
		{"no pg_hba.conf entry", "the server does not let this client in: add a line to its pg_hba.conf"},
		{"does not exist", "check dbname (createdb NAME makes a database) or the user name"},
		{"server refused TLS", "the server does not speak TLS: use sslmode=disable or sslmode=prefer"},
		{"certificate", "the server's TLS certificate was not accepted: check sslrootcert, or sslmode"},
		{"i/o timeout", noAnswer},
		{"context deadline exceeded", noAnswer},
		{"too many clients", "the server is at max_connections: lower pool_max_conns or put a pooler in front"},
	} {
		if strings.Contains(msg, h.says) {
			return h.hint
		}
	}
	return ""
}

// sqlitePath checks (and with CreateDir prepares) the place of a SQLite file.
func sqlitePath(path string, o Options) error {
	dir := filepath.Dir(path)
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			if st, err := os.Stat(dir); !o.CreateDir && (err != nil || !st.IsDir()) {
				// A typed path into no folder is a typo, not a database to migrate.
				return fmt.Errorf("%w: directory %s of SQLite file %s does not exist", ErrUnavailable, dir, path)
			}
			return fmt.Errorf("%w (SQLite file %s does not exist)", ErrNotMigrated, path)
		}
		return nil
	}
	if o.CreateDir {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%w: create directory for %s: %v", ErrUnavailable, path, err)
		}
		return nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: directory %s of SQLite file %s does not exist", ErrUnavailable, dir, path)
	}
	return nil
}

// PrimaryKey returns the columns of table's primary key, in order, as the
// database has them (PostgreSQL; nil when the table has none).
func PrimaryKey(ctx context.Context, db bun.IDB, table string) ([]string, error) {
	var cols []string
	err := db.NewRaw(`SELECT a.attname FROM pg_index i
		JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, o) ON true
		JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
		WHERE i.indrelid = to_regclass(?) AND i.indisprimary ORDER BY k.o`, table).Scan(ctx, &cols)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("primary key of %s: %w", table, err)
	}
	return cols, nil
}

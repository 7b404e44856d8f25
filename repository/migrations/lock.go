package migrations

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/remstore/remstore/repository"
)

// Processes that start together (replicas restarting, a `migrate up` beside
// a `serve`) take turns: one migrates, the others wait for it, then find
// nothing left to do. bun's own lock (a row inserted into LocksTable) made
// the others fail at once ("migrations table is already locked"), also with
// nothing to migrate, and a process killed while it held it left the row
// for good.
//
// On PostgreSQL the lock is a transaction-scoped advisory lock, taken on a
// connection of its own (outside the pool, so the migrations never wait for
// a connection the lock holds) in a transaction kept open while the
// migrations run on the pool. A transaction keeps one server connection
// also behind a pooler in transaction mode (PgBouncer), where a
// session-scoped advisory lock would stay on a server connection that the
// pooler hands to another client. The wait is a try every few hundred
// milliseconds, each in a short transaction of its own, never a blocking
// pg_advisory_xact_lock: ten waiters blocked in the server would hold ten of
// a pooler's server connections, and the holder's migrations could then
// find none. A process that dies ends its transaction and so its lock.
//
// On SQLite it is an flock on a file beside the database, which the kernel
// lets go when the process dies.

// DefaultLockWait is how long a process waits for another's migration
// before it gives up with ErrLockWait.
const DefaultLockWait = 10 * time.Minute

// ErrLockWait is the error of a wait for the migration lock that reached
// its bound: another process held the lock all that time.
var ErrLockWait = errors.New("another process held it all that time while migrating this database")

// Options adjust ApplyWith. The zero value is Apply's.
type Options struct {
	// LockWait bounds the wait for another process's migration;
	// DefaultLockWait when 0.
	LockWait time.Duration
	// Waiting, when set, is called once when another process holds the
	// migration lock, with what this one waits for.
	Waiting func(what string)
}

// The advisory lock is the two-key form, whose keys (objsubid 2 in
// pg_locks) never meet the one-key locks the store takes per session:
// lockClass is remstore's migrations, the second key the schema's.
const lockClass int32 = 0x72656d6d // "remm"

// lockKey is the second key of the migration lock of a schema.
func lockKey(schema string) int32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(schema))
	return int32(h.Sum32())
}

// held is a migration lock taken: claim runs once bun's tables exist,
// release lets the lock go.
type held struct {
	claim   func(context.Context) error
	release func() error
}

// retry waits before the next try for a lock: the pauses double from 20 ms
// to 500 ms, never past the deadline. It returns false when the deadline
// has passed, and ctx's error when ctx ended.
func retry(ctx context.Context, pause *time.Duration, deadline time.Time) (bool, error) {
	left := time.Until(deadline)
	if left <= 0 {
		return false, nil
	}
	t := time.NewTimer(min(*pause, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
	}
	*pause = min(2**pause, 500*time.Millisecond)
	return true, nil
}

// lock takes the migration lock of db, waiting as Options say.
func lock(ctx context.Context, db *repository.DB, o Options) (*held, error) {
	wait := o.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	if db.Postgres() {
		return lockPostgres(ctx, db, wait, o.Waiting)
	}
	return lockSQLite(ctx, db, wait, o.Waiting)
}

func lockPostgres(ctx context.Context, db *repository.DB, wait time.Duration, waiting func(string)) (*held, error) {
	conn, err := pgx.ConnectConfig(ctx, db.Pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("connect for the migration lock: %w", err)
	}
	closeConn := func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = conn.Close(c)
	}
	var schema string
	if err := conn.QueryRow(ctx, "SELECT coalesce(current_schema(), '')").Scan(&schema); err != nil {
		closeConn()
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	key := lockKey(schema)
	what := fmt.Sprintf("the migration lock of schema %q (an advisory lock: classid %d, objid %d in pg_locks)",
		schema, uint32(lockClass), uint32(key))
	deadline := time.Now().Add(wait)
	pause := 20 * time.Millisecond
	told := false
	var tx pgx.Tx
	for {
		if tx, err = conn.Begin(ctx); err != nil {
			closeConn()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		var got bool
		if err = tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1, $2)", lockClass, key).Scan(&got); err == nil && got {
			// Held until the migrations end, however long they take.
			_, err = tx.Exec(ctx, "SET LOCAL idle_in_transaction_session_timeout = 0")
			if err == nil {
				break
			}
		}
		_ = tx.Rollback(ctx)
		if err != nil {
			closeConn()
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if !told && waiting != nil {
			waiting(what)
		}
		told = true
		more, rerr := retry(ctx, &pause, deadline)
		if rerr != nil || !more {
			closeConn()
			if rerr != nil {
				return nil, fmt.Errorf("waiting for %s: %w", what, rerr)
			}
			return nil, fmt.Errorf("waited %s for %s: %w", wait, what, ErrLockWait)
		}
	}
	return &held{
		// Older remstores lock with bun's row in LocksTable: the row,
		// inserted and never committed, makes one of them wait for this
		// transaction and then find nothing to migrate. A committed row is
		// one of them migrating now, or its row left when it died doing so.
		claim: func(ctx context.Context) error {
			_, err := tx.Exec(ctx, "INSERT INTO "+LocksTable+" (table_name) VALUES ($1)", Table)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "23505" {
				return fmt.Errorf("%s has a row for %s: an older remstore is migrating this database, or one stopped while migrating and left it there; once no migration runs, DELETE FROM %s and start again",
					LocksTable, Table, LocksTable)
			}
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			return nil
		},
		release: func() error {
			defer closeConn()
			c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := tx.Rollback(c); err != nil {
				return fmt.Errorf("%s was lost while this process migrated (its connection failed: %v); another process may have migrated at the same time: check with remstore migrate status",
					what, err)
			}
			return nil
		},
	}, nil
}

func lockSQLite(ctx context.Context, db *repository.DB, wait time.Duration, waiting func(string)) (*held, error) {
	var file string
	if err := db.NewRaw("SELECT file FROM pragma_database_list WHERE name = 'main'").Scan(ctx, &file); err != nil {
		return nil, fmt.Errorf("migration lock: %w", err)
	}
	none := &held{claim: func(context.Context) error { return nil }, release: func() error { return nil }}
	if file == "" { // in memory: no other process sees it
		return none, nil
	}
	path := file + "-migrate-lock"
	what := fmt.Sprintf("the migration lock of %s (a file lock on %s)", file, path)
	deadline := time.Now().Add(wait)
	pause := 20 * time.Millisecond
	told := false
	for {
		unlock, busy, err := tryFileLock(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		if !busy {
			none.release = func() error { unlock(); return nil }
			return none, nil
		}
		if !told && waiting != nil {
			waiting(what)
		}
		told = true
		more, err := retry(ctx, &pause, deadline)
		if err != nil {
			return nil, fmt.Errorf("waiting for %s: %w", what, err)
		}
		if !more {
			return nil, fmt.Errorf("waited %s for %s: %w", wait, what, ErrLockWait)
		}
	}
}

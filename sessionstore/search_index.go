package sessionstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/remstore/remstore/internal/words"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// The PostgreSQL search index (migration 16) is kept off the write path: a
// write notes the messages it touched in remstore_search_queue, and the
// indexer below turns them into remstore_search_docs rows, each message's
// words under internal/words' rule. serve runs it in the background
// (IndexSearchEvery); a search first runs it for a bounded while, so a
// search sees what was stored before it unless the indexer is far behind,
// and then says so (SearchResult.Indexing). SQLite keeps its index in the
// write's own transaction (a Go function its triggers call) and needs none
// of this.

// Indexer limits.
const (
	indexBatch = 500 // messages per transaction
	// searchCatchUp bounds how long a search indexes before it searches.
	searchCatchUp = 250 * time.Millisecond
)

// indexLock is the advisory lock one indexer at a time holds (for a batch's
// transaction): two would index the same rows twice. Its second key is the
// queue table's oid, so the indexers of two schemas of one database (or two
// test schemas) do not wait for each other.
const indexLock int32 = 0x72656d5f // "rem_"

// lockSQL takes the indexer's lock: at once or not at all (serve's loop),
// or waiting up to the lock_timeout the transaction set (a search, whose
// words must be in before it reads them).
var lockSQL = map[bool]string{
	false: `SELECT pg_try_advisory_xact_lock($1, '` + migrations.SearchQueueTable + `'::regclass::oid::int4)`,
	true:  `SELECT true FROM pg_advisory_xact_lock($1, '` + migrations.SearchQueueTable + `'::regclass::oid::int4)`,
}

// IndexResult says what a run of the indexer did.
type IndexResult struct {
	Indexed int  `json:"indexed"` // messages whose words were written (or removed)
	Pending bool `json:"pending"` // messages are still waiting (stopped at the budget, or another indexer holds the lock)
}

// IndexSearch indexes the messages waiting for it, batch by batch, until
// none wait, ctx ends or budget has passed (0: no budget). A no-op on
// SQLite. Another indexer at work (another serve, a search) is no error:
// the result says Pending.
func IndexSearch(ctx context.Context, db *repository.DB, budget time.Duration) (IndexResult, error) {
	if !db.Postgres() || db.Pool == nil {
		return IndexResult{}, nil
	}
	return indexSearch(ctx, db.Pool, budget, 0)
}

// indexSearch is IndexSearch; wait > 0 waits that long for another
// indexer's batch instead of leaving at once.
func indexSearch(ctx context.Context, pool *pgxpool.Pool, budget, wait time.Duration) (IndexResult, error) {
	var r IndexResult
	start := time.Now()
	for {
		n, more, err := indexOnce(ctx, pool, wait)
		r.Indexed += n
		if errors.Is(err, errIndexerBusy) {
			// Another indexer is at work (and has waited for): it
			// indexes what waits; spinning on its lock would not.
			r.Pending = true
			return r, nil
		}
		if err != nil {
			return r, err
		}
		if !more {
			if r.Indexed >= vacuumAfter {
				vacuumQueue(ctx, pool)
			}
			return r, nil
		}
		if ctx.Err() != nil || budget > 0 && time.Since(start) >= budget {
			r.Pending = true
			return r, nil
		}
	}
}

// vacuumAfter: a run that emptied a queue this long vacuums it. Every
// queue row read leaves an index entry behind until a vacuum, and a search
// reads the queue's index first: after a large import (1,000,000 messages)
// that was 15 ms a search until autovacuum came.
const vacuumAfter = 50_000

// vacuumQueue vacuums the queue, best effort: a role that does not own the
// table leaves it to autovacuum.
func vacuumQueue(ctx context.Context, pool *pgxpool.Pool) {
	_, _ = pool.Exec(ctx, "VACUUM "+migrations.SearchQueueTable)
}

// IndexSearchEvery runs IndexSearch every period until ctx ends, reporting
// each error to onErr (which may be nil).
func IndexSearchEvery(ctx context.Context, db *repository.DB, period time.Duration, onErr func(error)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		if _, err := IndexSearch(ctx, db, 0); err != nil && onErr != nil && ctx.Err() == nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// errIndexerBusy: another indexer held the lock past the wait.
var errIndexerBusy = errors.New("another indexer holds the lock")

// indexOnce indexes one batch in one transaction, at read committed so
// that each statement sees what was committed before it, the lock first of
// all (at repeatable read the snapshot was taken by the statement that
// waited for the lock, and a waiter re-indexed what the holder had just
// committed: 23505). The batch's queue rows are deleted before its
// messages are read: a note committed before the delete is gone and its
// message's latest content is what the read then sees; a note committed
// after it stays for the next batch. more: a full batch was read;
// errIndexerBusy: another indexer holds the lock.
func indexOnce(ctx context.Context, pool *pgxpool.Pool, wait time.Duration) (n int, more bool, err error) {
	err = pgx.BeginTxFunc(ctx, pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		if wait > 0 {
			if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", wait.Milliseconds())); err != nil {
				return err
			}
		}
		var got bool
		err := tx.QueryRow(ctx, lockSQL[wait > 0], indexLock).Scan(&got)
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "55P03" {
			// lock_timeout: the other indexer is still at it. The
			// transaction is aborted now: leave it (rolled back), not
			// commit it.
			return errIndexerBusy
		}
		if err != nil {
			return err
		}
		if !got {
			return errIndexerBusy
		}
		var sids, mids []uuid.UUID
		// In the index's order: a scan of the index skips the entries of rows
		// earlier batches deleted (and marks them so), where a scan of the
		// table would read every dead row until a vacuum.
		rows, err := tx.Query(ctx, `SELECT session_id, message_id FROM `+migrations.SearchQueueTable+`
			ORDER BY session_id, message_id LIMIT $1`, indexBatch)
		if err != nil {
			return err
		}
		var sid, mid uuid.UUID
		read := 0
		seen := map[[2]uuid.UUID]bool{} // a message noted twice is indexed once
		_, err = pgx.ForEachRow(rows, []any{&sid, &mid}, func() error {
			read++
			if !seen[[2]uuid.UUID{sid, mid}] {
				seen[[2]uuid.UUID{sid, mid}] = true
				sids, mids = append(sids, sid), append(mids, mid)
			}
			return nil
		})
		if err != nil || len(mids) == 0 {
			return err
		}
		more = read == indexBatch
		if _, err := tx.Exec(ctx, `DELETE FROM `+migrations.SearchQueueTable+` q USING `+pairs+` WHERE q.session_id = u.s AND q.message_id = u.m`, texts(sids), texts(mids)); err != nil {
			return err
		}
		n, err = indexMessages(ctx, tx, sids, mids)
		return err
	})
	if errors.Is(err, errIndexerBusy) {
		return 0, true, err
	}
	if err != nil {
		return n, false, fmt.Errorf("search index: %w", err)
	}
	return n, more, nil
}

// pairs are the batch's (session, message) pairs as rows: joined pair by
// pair, where "session_id = ANY(..) AND message_id = ANY(..)" would probe
// the two-column index once per combination (250,000 for a batch).
const pairs = `unnest($1::uuid[], $2::uuid[]) AS u(s, m)`

// indexMessages writes the words of the messages named (a message gone, or
// without a tenant, loses its row), one statement each way.
func indexMessages(ctx context.Context, tx pgx.Tx, sids, mids []uuid.UUID) (int, error) {
	var d struct {
		sid, mid     []uuid.UUID
		tenant, role []string
		at           []*time.Time
		words        []string
	}
	rows, err := tx.Query(ctx, `SELECT m.session_id, m.id, m.tenant_id, m.role, m.created_at, m.content
		FROM `+pairs+` JOIN messages m ON m.session_id = u.s AND m.id = u.m WHERE m.tenant_id IS NOT NULL`, texts(sids), texts(mids))
	if err != nil {
		return 0, err
	}
	var sid, mid uuid.UUID
	var tenant, role, content string
	var at *time.Time
	_, err = pgx.ForEachRow(rows, []any{&sid, &mid, &tenant, &role, &at, &content}, func() error {
		d.sid, d.mid, d.tenant, d.role = append(d.sid, sid), append(d.mid, mid), append(d.tenant, tenant), append(d.role, role)
		d.at, d.words = append(d.at, at), append(d.words, words.Index(content))
		return nil
	})
	if err != nil {
		return 0, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM `+migrations.SearchDocsTable+` d USING `+pairs+` WHERE d.session_id = u.s AND d.message_id = u.m`, texts(sids), texts(mids)); err != nil {
		return 0, err
	}
	// The words hold no space (internal/words): split, they are the lexemes.
	_, err = tx.Exec(ctx, `INSERT INTO `+migrations.SearchDocsTable+` (session_id, message_id, tenant_id, role, created_at, words)
		SELECT s, m, t, r, c, array_to_tsvector(string_to_array(w, ' ')) FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::text[]) AS u(s, m, t, r, c, w)
		ON CONFLICT (session_id, message_id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, role = EXCLUDED.role, created_at = EXCLUDED.created_at, words = EXCLUDED.words`,
		texts(d.sid), texts(d.mid), d.tenant, d.role, d.at, d.words)
	return len(mids), err
}

// texts are ids as text, which every exec mode sends (the pool may run
// without the server's type information: PgBouncer).
func texts(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

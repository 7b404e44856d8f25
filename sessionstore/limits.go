package sessionstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/repository"
)

// Limits bound what one tenant can make a store hold ( H1: one
// tenant grew a session to 200,000 messages in 11 s). Zero is no limit, the
// default. Every write that makes sessions or messages — a store, a
// compaction's summary, a fork, an import, an empty session made ahead of
// its first store — checks them in the transaction that writes, after the
// locks that make concurrent writers count one after the other, so that
// together they cannot pass a limit either. A write that would pass one
// writes nothing and answers a *LimitError (409 limit_reached, naming the
// field). The one message a session's final status records (a cancel or an
// error with a reason) is not refused: a full session can still be closed.
type Limits struct {
	// SessionMessages is how many messages one session may hold for a
	// tenant, removed ones included (they stay for audit until purged).
	SessionMessages int
	// Sessions is how many sessions a tenant may own, deleted ones
	// included until purged.
	Sessions int
}

// ErrLimit is what a *LimitError is.
var ErrLimit = errors.New("limit reached")

// LimitError says which limit a store would pass.
type LimitError struct {
	Field, Msg string
}

func (e *LimitError) Error() string { return e.Msg }
func (e *LimitError) Unwrap() error { return ErrLimit }

// The fields a refusal names.
const (
	fieldMessages = "messages"
	fieldSessions = "session_id"
)

// limit is one of the two limits: the field its refusal names and its
// maximum (0: none).
type limit struct {
	field string
	max   int
}

func (l Limits) messages() limit { return limit{fieldMessages, l.SessionMessages} }
func (l Limits) sessions() limit { return limit{fieldSessions, l.Sessions} }

// check is the rule of both limits for every writer written in Go: a write
// adding `adding` to what the tenant holds (a session's messages, or its
// sessions) is refused when the two together pass the maximum. A write that
// adds nothing (a resend) is never refused. The store function applies the
// same rule (store_batch_v8.sql) and answers which limit it met, which
// refused turns into the same error.
func (l limit) check(held, adding int) error {
	if l.max <= 0 || adding <= 0 || held+adding <= l.max {
		return nil
	}
	return l.refused(held, adding)
}

// refused is the error of a write of adding refused by l where the tenant
// holds held.
func (l limit) refused(held, adding int) *LimitError {
	if l.field == fieldSessions {
		if held >= l.max {
			return &LimitError{l.field, fmt.Sprintf("the user owns %d sessions, the server's limit per user is %d (deleted ones count until purged): purge one, or store into one of them", held, l.max)}
		}
		return &LimitError{l.field, fmt.Sprintf("the user owns %d sessions and may own %d (the server's limit per user): %d more would pass it", held, l.max, adding)}
	}
	return &LimitError{l.field, fmt.Sprintf("the session holds %d messages and may hold %d (the server's limit per session; removed ones count until purged): %d more would pass it",
		held, l.max, adding)}
}

// The statements of the limits, run by the Go writers and written into the
// store function as they are here, with $n for ?
// (TestLimitStatementsAreTheFunctions). The messages a session holds for a
// tenant are what a write counts to find its next position (nextPosition).
const (
	// sessionsSQL counts the tenant's sessions (an index of sessions by
	// tenant, migration 18). On Citus a count of every shard, pushed down
	// whole to them, also from the worker a delegated store runs on.
	sessionsSQL = "SELECT count(*) FROM sessions s WHERE s.tenant_id = ?"
	// tenantLockSQL is the tenant's lock on PostgreSQL: an advisory lock
	// of two keys (a session's has one: they never meet), held to the end
	// of the transaction, so it works through a pooler in transaction mode.
	tenantLockSQL = "SELECT pg_advisory_xact_lock(1919251827, hashtext(?))"
	// tenantTokenSQL is the tenant's lock on a distributed database, where
	// an advisory lock holds only on the node that takes it (a delegated
	// store runs on its session's worker): the row named after the tenant
	// in the table of lock tokens, distributed by id, so in one place.
	tenantTokenSQL = "INSERT INTO remstore_caller_ids AS c (id) VALUES (md5('remstore tenant ' || ?)::uuid) ON CONFLICT (id) DO UPDATE SET id = c.id"
)

// LimitTx is the transaction a limit is checked in: the write's own.
// Statements are written with ? placeholders.
type LimitTx interface {
	Postgres() bool
	// QueryRow runs a query of one row into dest; sql.ErrNoRows when it
	// has none.
	QueryRow(ctx context.Context, query string, args []any, dest ...any) error
	Exec(ctx context.Context, query string, args ...any) error
}

// BunTx is a bun transaction as a LimitTx.
func BunTx(tx bun.IDB) LimitTx { return bunTx{tx} }

type bunTx struct{ db bun.IDB }

func (b bunTx) Postgres() bool { return repository.IsPostgres(b.db) }

func (b bunTx) QueryRow(ctx context.Context, query string, args []any, dest ...any) error {
	return b.db.NewRaw(query, args...).Scan(ctx, dest...)
}

func (b bunTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := b.db.ExecContext(ctx, query, args...)
	return err
}

// lockSession takes session sid's write lock for the rest of q, as a store
// takes it: on PostgreSQL its advisory lock and its row (where the store
// function meets writers whose advisory lock is on another node); SQLite
// has one writer at a time. It reports whether the session exists.
func lockSession(ctx context.Context, q LimitTx, sid uuid.UUID) (bool, error) {
	probe := "SELECT 1 FROM sessions WHERE id = ?"
	if q.Postgres() {
		if err := q.Exec(ctx, "SELECT pg_advisory_xact_lock(?)", lockKey(sid)); err != nil {
			return false, err
		}
		probe += " FOR UPDATE"
	}
	var one int
	err := q.QueryRow(ctx, probe, []any{sid}, &one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// lockTenant takes the tenant's lock of the limits for the rest of q: the
// lock under which sessions of the tenant are made while a limit is set
// (tenantLockSQL, tenantTokenSQL; none on SQLite).
func lockTenant(ctx context.Context, q LimitTx, tenant string) error {
	if !q.Postgres() {
		return nil
	}
	var distributed bool
	if err := q.QueryRow(ctx, "SELECT to_regclass('remstore_caller_ids') IS NOT NULL", nil, &distributed); err != nil {
		return err
	}
	if distributed {
		return q.Exec(ctx, tenantTokenSQL, tenant)
	}
	return q.Exec(ctx, tenantLockSQL, tenant)
}

// ownedSessions is the tenant's count of sessions (sessionsSQL).
func ownedSessions(ctx context.Context, q LimitTx, tenant string) (int, error) {
	var n int
	err := q.QueryRow(ctx, sessionsSQL, []any{tenant}, &n)
	return n, err
}

// checkNewSession is the sessions' step of a write into session sid, in its
// transaction and before it writes, for the Go writers (the store function
// takes the same steps): under a limit, the session's lock and row, and
// when the session is new the tenant's lock and its sessions counted.
func (l Limits) checkNewSession(ctx context.Context, q LimitTx, sid uuid.UUID, tenant string) error {
	if l == (Limits{}) {
		return nil
	}
	exists, err := lockSession(ctx, q, sid)
	if err != nil {
		return fmt.Errorf("lock the session: %w", err)
	}
	if exists {
		return nil
	}
	if err := lockTenant(ctx, q, tenant); err != nil {
		return fmt.Errorf("lock the user's sessions: %w", err)
	}
	if exists, err = lockSession(ctx, q, sid); err != nil || exists || l.Sessions <= 0 { // made while this write waited?
		return err
	}
	n, err := ownedSessions(ctx, q, tenant)
	if err != nil {
		return fmt.Errorf("count the sessions: %w", err)
	}
	return l.sessions().check(n, 1)
}

// checkWrite is both limits' steps of a write adding `adding` messages into
// session sid (a fork's): the new session's, then the session's messages
// counted as the write finds its next position.
func (l Limits) checkWrite(ctx context.Context, q LimitTx, sid uuid.UUID, tenant string, adding int) error {
	if err := l.checkNewSession(ctx, q, sid, tenant); err != nil || l.SessionMessages <= 0 {
		return err
	}
	n, _, err := nextPosition(ctx, q, sid, tenant)
	if err != nil {
		return fmt.Errorf("count the session's messages: %w", err)
	}
	return l.messages().check(n, adding)
}

// ImportBatch is what one batch of an import writes, for its limits.
type ImportBatch struct {
	// Sessions are the batch's session records: those not in the
	// database yet are new.
	Sessions []ImportSession
	// Messages are the rows the batch adds (those not in the database
	// yet), per session and tenant.
	Messages []ImportMessages
}

// ImportSession is a session record of an import; a session without a
// tenant belongs to no one and counts against no limit.
type ImportSession struct {
	ID     uuid.UUID
	Tenant *string
}

// ImportMessages counts the new rows of one tenant into one session.
type ImportMessages struct {
	Session uuid.UUID
	Tenant  string
	N       int
}

// CheckImport checks an import's batch against the limits in q, the
// transaction that then writes it, as checkWrite checks a store: the
// sessions it touches are locked (in order), then the tenants of those it
// makes, and each count is checked by the rule every writer applies. A
// batch that would pass a limit is refused with a *LimitError and must
// write nothing.
func (l Limits) CheckImport(ctx context.Context, q LimitTx, b ImportBatch) error {
	if l == (Limits{}) {
		return nil
	}
	var touched []uuid.UUID
	for _, s := range b.Sessions {
		touched = append(touched, s.ID)
	}
	for _, m := range b.Messages {
		touched = append(touched, m.Session)
	}
	slices.SortFunc(touched, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	exists := map[uuid.UUID]bool{}
	for _, sid := range slices.Compact(touched) {
		ok, err := lockSession(ctx, q, sid)
		if err != nil {
			return fmt.Errorf("import: lock session %s: %w", sid, err)
		}
		exists[sid] = ok
	}
	made := map[string]int{} // the sessions the batch makes, per tenant
	for _, s := range b.Sessions {
		if !exists[s.ID] && s.Tenant != nil {
			made[*s.Tenant]++
			exists[s.ID] = true // a record twice counts once
		}
	}
	tenants := make([]string, 0, len(made))
	for t := range made {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	for _, t := range tenants {
		if err := lockTenant(ctx, q, t); err != nil {
			return fmt.Errorf("import: lock the sessions of %q: %w", t, err)
		}
		if l.Sessions > 0 {
			n, err := ownedSessions(ctx, q, t)
			if err != nil {
				return fmt.Errorf("import: count the sessions of %q: %w", t, err)
			}
			if err := l.sessions().check(n, made[t]); err != nil {
				return err
			}
		}
	}
	if l.SessionMessages <= 0 {
		return nil
	}
	for _, m := range b.Messages {
		n, _, err := nextPosition(ctx, q, m.Session, m.Tenant)
		if err != nil {
			return fmt.Errorf("import: count the messages of session %s: %w", m.Session, err)
		}
		if err := l.messages().check(n, m.N); err != nil {
			return fmt.Errorf("session %s: %w", m.Session, err)
		}
	}
	return nil
}

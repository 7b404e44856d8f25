package sessionstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// turns puts concurrent store calls into one session together. The
// session's advisory lock makes such calls wait for each other anyway, each
// paying its own round trip and its own commit (a WAL flush) while the
// others queue. Here the calls that arrive while one runs wait in line in
// this process, and the first of them then takes everyone waiting and runs
// them as one transaction: one round trip, one commit, each call still its
// own call of the store function, in arrival order, with its own result. A
// call that finds no one running for its session runs alone, as before.
// Calls for other sessions never share a transaction (no lock order to
// get wrong), and other processes still meet at the advisory lock.
type turns struct {
	mu       sync.Mutex
	sessions map[uuid.UUID]*line
	merged   atomic.Int64 // calls that ran inside another's call (tests)
}

// line is the calls waiting for one session.
type line struct{ waiting []*turn }

// turn is one waiting call.
type turn struct {
	ctx  context.Context
	s    *Store
	p    *writePlan
	out  writeOutcome
	err  error
	lead chan struct{} // closed: this call runs the next group
	done chan struct{} // closed: out and err are set
}

const (
	// maxGroup bounds the calls in one transaction (its statement and its
	// lock hold time).
	maxGroup = 64
	// groupTimeout bounds a group's transaction: it runs on behalf of
	// several callers, so no one caller's cancellation ends it.
	groupTimeout = 30 * time.Second
)

func newTurns() *turns { return &turns{sessions: map[uuid.UUID]*line{}} }

func (t *turns) write(ctx context.Context, s *Store, c conn, p *writePlan) (writeOutcome, error) {
	me := &turn{ctx: ctx, s: s, p: p, lead: make(chan struct{}), done: make(chan struct{})}
	t.mu.Lock()
	l, busy := t.sessions[p.sid]
	if !busy {
		t.sessions[p.sid] = &line{}
		t.mu.Unlock()
		me.out, me.err = writeFunction(ctx, s, c, p)
		t.next(p.sid)
		return me.out, me.err
	}
	l.waiting = append(l.waiting, me)
	t.mu.Unlock()
	select {
	case <-me.done:
	case <-me.lead:
		t.lead(c, me)
	case <-ctx.Done():
		t.mu.Lock()
		if i := slices.Index(l.waiting, me); i >= 0 { // still in line: leave it
			l.waiting = slices.Delete(l.waiting, i, i+1)
			t.mu.Unlock()
			return writeOutcome{}, ctx.Err()
		}
		t.mu.Unlock()
		// Already taken, as a member or as the next leader: the group's
		// transaction decides, within groupTimeout.
		select {
		case <-me.done:
		case <-me.lead:
			t.lead(c, me)
		}
	}
	return me.out, me.err
}

// lead runs the group me heads: me and whoever waits behind it.
func (t *turns) lead(c conn, me *turn) {
	t.mu.Lock()
	l := t.sessions[me.p.sid]
	n := min(len(l.waiting), maxGroup-1)
	group := append([]*turn{me}, l.waiting[:n]...)
	l.waiting = slices.Clone(l.waiting[n:])
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(me.ctx), groupTimeout)
	defer cancel()
	if len(group) == 1 {
		me.out, me.err = writeFunction(ctx, me.s, c, me.p)
	} else {
		runGroup(ctx, c, group, &t.merged)
	}
	for _, g := range group[1:] {
		close(g.done)
	}
	t.next(me.p.sid)
}

// next hands the session to the first call in line, or closes the line.
func (t *turns) next(sid uuid.UUID) {
	t.mu.Lock()
	l := t.sessions[sid]
	if len(l.waiting) == 0 {
		delete(t.sessions, sid)
		t.mu.Unlock()
		return
	}
	first := l.waiting[0]
	l.waiting = l.waiting[1:]
	t.mu.Unlock()
	close(first.lead)
}

// runGroup runs the group's calls as one transaction: pgx sends a batch in
// the simple protocol as one message, whose statements run in one implicit
// transaction. Neighbouring calls that differ only in their rows (same
// tenant and user, no caller ids, same lifecycle rule) become one call of
// the store function with their rows in order: what running them one after
// the other within the same microseconds would write, for the price of one.
// Where the server refuses a statement (all are rolled back then), each
// call runs again alone, so each gets its own answer; where the connection
// failed, no one can know whether the group committed, and every call gets
// that error (as a call alone would).
func runGroup(ctx context.Context, c conn, group []*turn, merged *atomic.Int64) {
	type call struct {
		members []*turn
		p       *writePlan
	}
	var calls []call
	for _, g := range group {
		if n := len(calls); n > 0 && mergeable(calls[n-1].members[0], g) {
			last := &calls[n-1]
			if len(last.members) == 1 { // copy before appending: the plan is the caller's
				cp := *last.p
				cp.rows = slices.Clone(cp.rows)
				last.p = &cp
			}
			last.p.rows = append(last.p.rows, g.p.rows...)
			last.members = append(last.members, g)
			continue
		}
		calls = append(calls, call{members: []*turn{g}, p: g.p})
	}
	b := &pgx.Batch{}
	for _, cl := range calls {
		args, err := storeCall(cl.members[0].s, cl.p)
		if err != nil { // cannot happen (the rows are validated JSON); alone, the call says so
			runAlone(ctx, c, group)
			return
		}
		b.Queue(storeStatement.PG(), storeStatement.PGArgs(args)...)
	}
	err := func() error {
		pc, err := c.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer pc.Release()
		br := pc.SendBatch(ctx, b)
		var first error
		for _, cl := range calls {
			// A batch goes in the pool's default mode, the simple protocol
			// (repository.OpenWith), whatever mode its statements name.
			out, err := scanOutcome(br.QueryRow(), pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			at := 0
			for _, m := range cl.members {
				m.out = writeOutcome{status: out.status, first: out.first + at, existing: out.existing, last: out.last}
				if len(cl.members) > 1 && len(m.p.rows) > 0 { // merged: each member's own last row
					m.out.last = m.p.rows[len(m.p.rows)-1].ID.String()
				}
				if len(out.keys) >= at+len(m.p.rows) {
					m.out.keys = out.keys[at : at+len(m.p.rows)]
				}
				at += len(m.p.rows)
			}
		}
		if err := br.Close(); first == nil {
			first = err
		}
		return first
	}()
	if err == nil {
		merged.Add(int64(len(group) - len(calls)))
		return
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		for _, g := range group {
			g.out, g.err = writeOutcome{}, err
		}
		return
	}
	runAlone(ctx, c, group)
}

// runAlone runs each call of the group in a transaction of its own.
func runAlone(ctx context.Context, c conn, group []*turn) {
	for _, g := range group {
		g.out, g.err = writeFunction(ctx, g.s, c, g.p)
	}
}

// mergeable says b's rows can follow a's in a's call of the store function:
// a guarded call is never merged (its guard is about the session before its
// own rows, which a merged call does not check), nor one under a limit of
// messages (each call is checked against it on its own: the first may fit
// where both together do not).
func mergeable(a, b *turn) bool {
	return !a.p.check && !b.p.check && a.p.expect == "" && b.p.expect == "" && a.s.userID == b.s.userID && a.p.userID == b.p.userID &&
		a.p.allowInactive == b.p.allowInactive && a.p.name == b.p.name && a.p.limits == b.p.limits && a.p.limits.SessionMessages == 0
}

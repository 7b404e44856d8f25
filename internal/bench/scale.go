package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// SweepWorkloads are "store a 4-message turn into a session of N" for each N
// of sizes: a turn's cost must not grow with the session. Each session is
// filled as remstore would have written it (keyed rows of the tenant) and
// stored into once, untimed, so the count kept for it exists, as it does
// for any session remstore wrote. The peer stores into a session of its own
// of the same size.
func (e *Env) SweepWorkloads(ctx context.Context, sizes []int) ([]Workload, error) {
	var out []Workload
	for _, n := range sizes {
		key := fmt.Sprintf("sweep-%d", n)
		sid, err := e.Store.SessionUUID(key)
		if err != nil {
			return nil, err
		}
		if err := e.fillSession(ctx, sid, key, n); err != nil {
			return nil, fmt.Errorf("fill a session of %d: %w", n, err)
		}
		i := 0
		run := func(ctx context.Context) error {
			i++
			_, err := e.Store.Store(ctx, key, Turn(i), sessionstore.StoreOptions{})
			return err
		}
		if err := run(ctx); err != nil {
			return nil, err
		}
		w := Workload{Name: fmt.Sprintf("store turn into %d", n), Rows: 4, Size: n, Run: run}
		if len(out) > 0 {
			// The smallest session's turn is each larger one's floor, so the
			// two take turns sample by sample: measured one after the
			// other, a checkpoint or autovacuum spell on the largest table
			// moved their ratio from 1.1 to 1.4 between two full runs.
			w.Floor, w.FloorDef = out[0].Run, fmt.Sprintf("the same turn into the session of %d, taking turns", sizes[0])
		}
		if e.Peer != nil {
			psid := uuid.New()
			if err := e.fillSession(ctx, psid, "peer-"+key, n); err != nil {
				return nil, err
			}
			w.Peer = e.Peer.op(map[string]any{"op": "store", "sid": psid.String(), "user": "bench", "turn": dicts(Turn(0))})
		}
		out = append(out, w)
	}
	// Bounded loads: the last 20 messages of each session of the sweep,
	// beside the whole load of a session of 20, which they must cost no
	// more than (BoundedRatio).
	const last = 20
	small := "bounded-20"
	if err := e.fill(ctx, small, last); err != nil {
		return nil, err
	}
	count := func(ctx context.Context, key string, o sessionstore.LoadOptions) error {
		n := 0
		err := e.Store.LoadEach(ctx, key, o, func(models.HistoryMessage) error { n++; return nil })
		if err == nil && (n == 0 || n > last) { // fewer when a tool result at the start goes with its call
			err = fmt.Errorf("load of %s gave %d messages, want up to %d", key, n, last)
		}
		return err
	}
	base := Workload{Name: fmt.Sprintf("load a %d-message session", last), Rows: last, Size: last,
		Run: func(ctx context.Context) error { return count(ctx, small, sessionstore.LoadOptions{}) }}
	out = append(out, base)
	baseDef := fmt.Sprintf("the whole load of a %d-message session, taking turns", last)
	for _, n := range sizes {
		key := fmt.Sprintf("sweep-%d", n)
		out = append(out, Workload{Name: fmt.Sprintf("load last %d of %d", last, n), Rows: last, Size: n,
			Run:   func(ctx context.Context) error { return count(ctx, key, sessionstore.LoadOptions{LastN: last}) },
			Floor: base.Run, FloorDef: baseDef})
	}
	cs, err := e.CompactedWorkloads(ctx, sizes, last)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		cs[i].Floor, cs[i].FloorDef = base.Run, baseDef
	}
	out = append(out, cs...)
	// Pops: the last message of each session of the sweep beside the last
	// of a session of 20 (PopRatio); each pop's message is stored back,
	// untimed, so the sessions keep their sizes.
	pops := append([]int{last}, sizes...)
	for _, n := range slices.Compact(pops) {
		key := fmt.Sprintf("sweep-%d", n)
		if n == last {
			key = small
		}
		i := 0
		out = append(out, Workload{Name: fmt.Sprintf("pop the last of %d", n), Rows: 1, Size: n,
			Setup: func() {
				i++
				if _, err := e.Store.Store(ctx, key, Turn(i)[:1], sessionstore.StoreOptions{}); err != nil {
					panic(fmt.Sprintf("pop workload: store one back: %v", err))
				}
			},
			Run: func(ctx context.Context) error {
				_, ok, err := e.Store.PopMessage(ctx, key)
				if err == nil && !ok {
					err = fmt.Errorf("pop of %s: the session is empty", key)
				}
				return err
			}})
	}
	if e.Conn != nil && len(sizes) > 0 {
		// The fills wrote millions of rows: vacuum them now, or autovacuum
		// does it while the sweep is measured.
		if _, err := e.DB.ExecContext(ctx, "VACUUM (ANALYZE) messages"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CompactedWorkloads are "load a compacted session of N keeping keep" for
// each N of sizes: a session of N messages compacted to keep its last keep,
// loaded whole (the summary and the keep messages after it). Beside the load
// of a session of keep messages (CompactedRatio) it must not grow with N:
// compaction exists to make the next load small. The summary is written as
// Compact writes it: by Compact on SQLite, by one generated row on
// PostgreSQL, where Compact would read a million rows to summarize them.
func (e *Env) CompactedWorkloads(ctx context.Context, sizes []int, keep int) ([]Workload, error) {
	var out []Workload
	for _, n := range sizes {
		if n <= keep {
			continue
		}
		key := fmt.Sprintf("compacted-%d", n)
		sid, err := e.Store.SessionUUID(key)
		if err != nil {
			return nil, err
		}
		if err := e.fillSession(ctx, sid, key, n); err != nil {
			return nil, fmt.Errorf("fill a session of %d: %w", n, err)
		}
		if err := e.compact(ctx, sid, key, n, keep); err != nil {
			return nil, fmt.Errorf("compact a session of %d: %w", n, err)
		}
		out = append(out, Workload{Name: fmt.Sprintf("load compacted %d keeping %d", n, keep), Rows: keep + 1, Size: n,
			Run: func(ctx context.Context) error {
				got := 0
				err := e.Store.LoadEach(ctx, key, sessionstore.LoadOptions{}, func(models.HistoryMessage) error { got++; return nil })
				if err == nil && got != keep+1 {
					err = fmt.Errorf("load of %s gave %d messages, want the summary and %d", key, got, keep)
				}
				return err
			}})
	}
	return out, nil
}

// compact compacts the session of n messages fillSession wrote to keep its
// last keep, with a one-line summary.
func (e *Env) compact(ctx context.Context, sid uuid.UUID, key string, n, keep int) error {
	if e.Conn == nil {
		_, err := e.Store.Compact(ctx, key, func(_ context.Context, msgs []models.HistoryMessage) (string, error) {
			return fmt.Sprintf("Summary of %d earlier messages.", len(msgs)), nil
		}, sessionstore.CompactOptions{KeepLast: keep})
		return err
	}
	_, err := e.DB.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
		SELECT gen_random_uuid(), ?, 'assistant', 'Summary of ' || ?::int || ' earlier messages.',
		       jsonb_build_object('message_index', ?::int, 'entity_key', 'session-' || ?::text || '-msg-' || ?::int,
		                          'compaction', true, 'compacts_before', ?::int),
		       'bench', 'bench', max(created_at) + interval '1 microsecond', now()
		FROM messages WHERE session_id = ?`, sid, n-keep, n, sid.String(), n, n-keep, sid)
	return err
}

// CompactedRatio is the load of the largest compacted session of a sweep
// over the whole load of a 20-message session (1.0: what the summary covers
// is never read).
func CompactedRatio(rs []Result) (base, large Result, ratio float64, ok bool) {
	return scaleRatio(rs, "load a 20-message session", "load compacted %d keeping %d")
}

// scaleRatio is the last of rs named as format says over base: the result
// named baseName, or the first so named when baseName is "" (the smallest
// session of a sweep); turnsRatio divides them. ok is false when either is
// missing.
func scaleRatio(rs []Result, baseName, format string) (base, large Result, ratio float64, ok bool) {
	args := make([]any, strings.Count(format, "%d"))
	for i := range args {
		args[i] = new(int)
	}
	var named []Result
	for _, r := range rs {
		if baseName != "" && r.Name == baseName {
			base = r
		} else if _, err := fmt.Sscanf(r.Name, format, args...); err == nil {
			named = append(named, r)
		}
	}
	if baseName == "" && len(named) > 1 {
		base, named = named[0], named[1:]
	}
	if base.MedianMS == 0 || len(named) == 0 {
		return base, large, 0, false
	}
	large = named[len(named)-1]
	return base, large, turnsRatio(base, large), true
}

// turnsRatio is large over base: the ratio of the samples that took turns
// when large was measured beside base as its floor, else of the medians.
func turnsRatio(base, large Result) float64 {
	if large.FloorMS > 0 {
		return large.RatioFloor
	}
	return large.MedianMS / base.MedianMS
}

// fillSession writes n rows of the benchmark's tenant into session sid, keyed
// and ordered as a store writes them: generated SQL on PostgreSQL, store
// calls of 1,000 messages on SQLite.
func (e *Env) fillSession(ctx context.Context, sid uuid.UUID, name string, n int) error {
	if e.Conn == nil {
		return e.fill(ctx, name, n)
	}
	if _, err := e.DB.ExecContext(ctx, `INSERT INTO sessions (id, name, status, user_id, tenant_id) VALUES (?, ?, 'active', 'bench', 'bench')`,
		sid, name); err != nil {
		return err
	}
	_, err := e.DB.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
		SELECT gen_random_uuid(), ?, CASE WHEN g % 2 = 0 THEN 'user' ELSE 'assistant' END, repeat('x', 200),
		       jsonb_build_object('message_index', g, 'entity_key', 'session-' || ?::text || '-msg-' || g, 'timestamp', null),
		       'bench', 'bench', now() - interval '1 day' + g * interval '1 microsecond', now() - interval '1 day'
		FROM generate_series(0, ?::int - 1) g`, sid, sid.String(), n)
	if err == nil {
		_, err = e.DB.ExecContext(ctx, "ANALYZE messages")
	}
	return err
}

// SweepRatio is the store into the largest session of a sweep over the one
// into the smallest (1.0: flat), the two taking turns (turnsRatio).
func SweepRatio(rs []Result) (small, large Result, ratio float64, ok bool) {
	return scaleRatio(rs, "", "store turn into %d")
}

// BoundedRatio is the load of the last 20 messages of the largest session
// of a sweep over the whole load of a 20-message session (1.0: the rest of
// the session is never read).
func BoundedRatio(rs []Result) (base, large Result, ratio float64, ok bool) {
	return scaleRatio(rs, "load a 20-message session", "load last %d of %d")
}

// PopRatio is the pop of the last message of the largest session of a
// sweep over the pop of the last of a 20-message session (1.0: a pop reads
// one end of the session's index, whatever its size).
func PopRatio(rs []Result) (base, large Result, ratio float64, ok bool) {
	return scaleRatio(rs, "", "pop the last of %d")
}

// ConcResult is one concurrency run: writers storing turns for a while, each
// into a session of its own or all into one.
type ConcResult struct {
	Name        string  `json:"name"`
	Writers     int     `json:"writers"`
	Shared      bool    `json:"shared_session"`
	Turns       int     `json:"turns"`
	TurnsPerSec float64 `json:"turns_per_sec"`
	P50MS       float64 `json:"p50_ms"`
	P99MS       float64 `json:"p99_ms"`
	// The peer's own code doing the same (0 without it).
	PeerTurnsPerSec float64 `json:"peer_turns_per_sec,omitempty"`
	PeerP50MS       float64 `json:"peer_p50_ms,omitempty"`
	PeerP99MS       float64 `json:"peer_p99_ms,omitempty"`
	RatioPeer       float64 `json:"remstore_over_peer,omitempty"` // turns/s
	// PeerMissing counts rows of turns the peer acknowledged that are not
	// in the table (remstore's own are checked by Concurrency: none).
	PeerMissing int `json:"peer_missing_rows"`
	// PostgreSQL's CPU per turn (ServerCPU over the run; 0: not known), the
	// peer's beside it.
	ServerCPUPerTurnMS     float64 `json:"server_cpu_per_turn_ms,omitempty"`
	PeerServerCPUPerTurnMS float64 `json:"peer_server_cpu_per_turn_ms,omitempty"`
}

// ConcurrencyCases are the concurrency workload: 1, 8 and 32 writers each on
// a session of its own, and 32 on one session.
var ConcurrencyCases = []struct {
	Writers int
	Shared  bool
}{{1, false}, {8, false}, {32, false}, {32, true}}

// Concurrency runs writers goroutines storing 4-message turns for d through
// the benchmark's store (its pool), then checks what they stored: every
// acknowledged turn's rows there, positions 0..n-1 once each. With the peer
// set, the peer's own code does the same from its process (its pool, its
// event loop) right after, on sessions of its own.
func (e *Env) Concurrency(ctx context.Context, writers int, shared bool, d time.Duration) (ConcResult, error) {
	r := ConcResult{Name: fmt.Sprintf("%d writers, own sessions", writers), Writers: writers, Shared: shared}
	if shared {
		r.Name = fmt.Sprintf("%d writers, one session", writers)
	}
	run := uuid.NewString()[:8]
	keys := make([]string, writers)
	for w := range keys {
		keys[w] = fmt.Sprintf("conc-%s-%d", run, w)
		if shared {
			keys[w] = "conc-" + run
		}
	}
	lat := make([][]time.Duration, writers)
	acked := make([]int, writers)
	errs := make([]error, writers)
	// Each writer's first turn, untimed: it makes the session and opens the
	// writer's connection, as the Python service's side has its sessions
	// made before its clock starts. In 0.5 s slots the 32 first turns were
	// the p99 (12.7x the p50 in one --quick run).
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Store.Store(ctx, keys[w], Turn(0), sessionstore.StoreOptions{}); err != nil {
				errs[w] = err
				return
			}
			acked[w]++
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("%s: first turns: %w", r.Name, err)
	}
	cpu0, cpuKnown := e.ServerCPU(ctx)
	start := time.Now()
	deadline := start.Add(d)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1; time.Now().Before(deadline); i++ {
				t := time.Now()
				if _, err := e.Store.Store(ctx, keys[w], Turn(i), sessionstore.StoreOptions{}); err != nil {
					errs[w] = err
					return
				}
				lat[w] = append(lat[w], time.Since(t))
				acked[w]++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("%s: %w", r.Name, err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	r.Turns = len(all)
	r.ServerCPUPerTurnMS = e.serverCPUPerTurn(ctx, cpu0, cpuKnown, r.Turns)
	r.TurnsPerSec = float64(len(all)) / elapsed.Seconds()
	r.P50MS, r.P99MS = pct(all, 0.5), pct(all, 0.99)
	// Nothing lost, positions gap-free.
	want := map[string]int{}
	for w, k := range keys {
		want[k] += 4 * acked[w]
	}
	for k, n := range want {
		if err := e.checkPositions(ctx, k, n); err != nil {
			return r, fmt.Errorf("%s: %w", r.Name, err)
		}
	}
	if e.Peer != nil {
		sids := make([]string, writers)
		one := uuid.NewString()
		for w := range sids {
			sids[w] = uuid.NewString()
			if shared {
				sids[w] = one
			}
		}
		cpu0, cpuKnown := e.ServerCPU(ctx)
		lat, elapsed, err := e.Peer.Concurrent(map[string]any{"op": "concurrent", "sids": sids, "user": "bench",
			"turn": dicts(Turn(0)), "seconds": d.Seconds()})
		if err != nil {
			return r, fmt.Errorf("%s peer: %w", r.Name, err)
		}
		r.PeerServerCPUPerTurnMS = e.serverCPUPerTurn(ctx, cpu0, cpuKnown, len(lat))
		// What the peer acknowledged and what it stored (its store logs a
		// failed row and goes on).
		uniq := slices.Compact(slices.Sorted(slices.Values(sids)))
		var stored int
		if err := e.DB.NewRaw("SELECT count(*) FROM messages WHERE session_id IN (?)", bun.List(uniq)).Scan(ctx, &stored); err != nil {
			return r, err
		}
		r.PeerMissing = 4*len(lat) - stored
		slices.Sort(lat)
		if len(lat) > 0 {
			r.PeerTurnsPerSec = float64(len(lat)) / elapsed.Seconds()
			r.PeerP50MS, r.PeerP99MS = pct(lat, 0.5), pct(lat, 0.99)
			r.RatioPeer = r.TurnsPerSec / r.PeerTurnsPerSec
		}
	}
	return r, nil
}

// checkPositions fails unless session key holds exactly n rows of the
// benchmark's tenant with message_index 0..n-1, each once, each keyed by it.
func (e *Env) checkPositions(ctx context.Context, key string, n int) error {
	sid, err := e.Store.SessionUUID(key)
	if err != nil {
		return err
	}
	var metas []string
	if err := e.DB.NewRaw("SELECT metadata FROM messages WHERE session_id = ? AND tenant_id = 'bench'", sid).Scan(ctx, &metas); err != nil {
		return err
	}
	seen := make([]bool, len(metas))
	for _, m := range metas {
		var md struct {
			Index *int   `json:"message_index"`
			Key   string `json:"entity_key"`
		}
		if err := json.Unmarshal([]byte(m), &md); err != nil {
			return err
		}
		if md.Index == nil || *md.Index < 0 || *md.Index >= len(seen) || seen[*md.Index] ||
			md.Key != fmt.Sprintf("session-%s-msg-%d", sid, *md.Index) {
			return fmt.Errorf("session %s: position %v (key %q) missing, repeated or out of 0..%d", key, md.Index, md.Key, len(seen)-1)
		}
		seen[*md.Index] = true
	}
	if len(metas) != n {
		return fmt.Errorf("session %s: %d rows acknowledged, %d stored", key, n, len(metas))
	}
	return nil
}

// Concurrent sends a concurrency request and returns the latencies the
// peer measured and how long the whole run took.
func (p *Peer) Concurrent(req map[string]any) ([]time.Duration, time.Duration, error) {
	raw, err := p.raw(req)
	if err != nil {
		return nil, 0, err
	}
	var resp struct {
		NS      []int64 `json:"ns"`
		Elapsed int64   `json:"elapsed_ns"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, 0, fmt.Errorf("peer: %w", err)
	}
	d := make([]time.Duration, len(resp.NS))
	for i, ns := range resp.NS {
		d[i] = time.Duration(ns)
	}
	return d, time.Duration(resp.Elapsed), nil
}

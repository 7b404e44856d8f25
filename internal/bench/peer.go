package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Peer is the Python service's own session store (../shared/peer), timed by
// interop/peer/bench_server.py in a process of its own on the same database:
// the comparison a user of the Python service asks for first. Durations are
// measured in Python around the peer's calls, so the pipe is not in them.
type Peer struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// pgxOnly are connection-string parameters pgx reads itself (its exec
// mode, its caches, pgxpool's pool); asyncpg would send them to the server
// as settings, which refuses them.
var pgxOnly = []string{"default_query_exec_mode", "statement_cache_capacity", "description_cache_capacity",
	"pool_max_conns", "pool_min_conns", "pool_min_idle_conns", "pool_max_conn_lifetime", "pool_max_conn_lifetime_jitter",
	"pool_max_conn_idle_time", "pool_health_check_period"}

// forPeer is dbURL without pgxOnly's parameters: the same database for
// the Python service's own pool (a URL behind PgBouncer carries
// default_query_exec_mode, docs/operations.md).
func forPeer(dbURL string) string {
	u, err := url.Parse(dbURL)
	if err != nil {
		return dbURL
	}
	q := u.Query()
	for _, k := range pgxOnly {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// StartPeer runs python script and connects the peer (its code in peerDir)
// to dbURL.
func StartPeer(python, script, peerDir, dbURL string) (*Peer, error) {
	peerDir, err := filepath.Abs(peerDir) // the script imports it from another directory
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(python, script)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the Python service (%s %s): %w", python, script, err)
	}
	p := &Peer{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	p.out.Buffer(make([]byte, 1<<20), 1<<26)
	if _, err := p.Do(map[string]any{"op": "connect", "db": forPeer(dbURL), "peer": peerDir}); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// raw sends one request and returns the peer's answer line.
func (p *Peer) raw(req map[string]any) ([]byte, error) {
	b, _ := json.Marshal(req)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	if !p.out.Scan() {
		return nil, errors.New("peer: no answer (it exited)")
	}
	var resp struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(p.out.Bytes(), &resp); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	if resp.Error != "" {
		return nil, fmt.Errorf("peer %v: %s", req["op"], resp.Error)
	}
	return p.out.Bytes(), nil
}

// Do sends one request and returns the durations the peer measured.
func (p *Peer) Do(req map[string]any) ([]time.Duration, error) {
	raw, err := p.raw(req)
	if err != nil {
		return nil, err
	}
	var resp struct {
		NS []int64 `json:"ns"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("peer: %w", err)
	}
	d := make([]time.Duration, len(resp.NS))
	for i, ns := range resp.NS {
		d[i] = time.Duration(ns)
	}
	return d, nil
}

// Close ends the peer's process.
func (p *Peer) Close() {
	_ = p.in.Close()
	_ = p.cmd.Wait()
}

// op is a peer request as a workload's timed operation: n runs, durations back.
func (p *Peer) op(req map[string]any) PeerOp {
	return func(_ context.Context, n int) ([]time.Duration, error) {
		r := map[string]any{"n": n}
		for k, v := range req {
			r[k] = v
		}
		return p.Do(r)
	}
}

// dicts is a history as the peer takes it.
func dicts(msgs []models.HistoryMessage) []json.RawMessage {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		out[i], _ = m.MarshalJSON()
	}
	return out
}

// Statements counts what one run of each side sends to the server, from
// pg_stat_statements (top-level statements: round trips, not the statements
// inside remstore's store function). -1 where it cannot be counted.
type Statements struct {
	Remstore, Floor, Peer int
}

// CountStatements runs w's operations once each and counts their statements
// on the server. It needs pg_stat_statements loaded (scripts/pg.sh starts the
// test cluster with it); without, every count is -1.
func (e *Env) CountStatements(ctx context.Context, w Workload) Statements {
	out := Statements{-1, -1, -1}
	if e.Conn == nil {
		return out
	}
	if _, err := e.Conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA public"); err != nil {
		return out
	}
	count := func(run func() error) int {
		if _, err := e.Conn.Exec(ctx, "SELECT public.pg_stat_statements_reset()"); err != nil {
			return -1
		}
		if run() != nil {
			return -1
		}
		var n int
		if err := e.Conn.QueryRow(ctx, `SELECT COALESCE(sum(calls), 0) FROM public.pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND query NOT ILIKE '%pg_stat_statements%'`).Scan(&n); err != nil {
			return -1
		}
		return n
	}
	if w.Setup != nil {
		w.Setup()
	}
	out.Remstore = count(func() error { return w.Run(ctx) })
	if w.Floor != nil {
		out.Floor = count(func() error { return w.Floor(ctx) })
	}
	if w.Peer != nil {
		out.Peer = count(func() error { _, err := w.Peer(ctx, 1); return err })
	}
	return out
}

// PeerOwnSchema prepares the comparison the peer's users meet today: the
// peer on the schema its own install.sql creates (no index on the entity
// key), in a schema of its own beside the benchmark's. It starts a second
// peer process there, installs the peer's schema with the peer's own code
// and fills its messages table to n rows the way fillTable fills remstore's.
// The returned op is the peer's lookup of one key in it.
func (e *Env) PeerOwnSchema(ctx context.Context, python, script, peerDir string, n int) (PeerOp, func(), error) {
	u, err := url.Parse(e.URL)
	if err != nil {
		return nil, nil, err
	}
	q := u.Query()
	schema := q.Get("search_path") + "_peer"
	if _, err := e.DB.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return nil, nil, err
	}
	drop := func() { _, _ = e.DB.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }
	q.Set("search_path", schema+",public") // the extensions' types live in public
	u.RawQuery = q.Encode()
	p, err := StartPeer(python, script, peerDir, u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	cleanup := func() { p.Close(); drop() }
	if _, err := p.Do(map[string]any{"op": "install"}); err != nil {
		cleanup()
		return nil, nil, err
	}
	// Filled on the peer schema's search path: its triggers name their
	// tables without a schema.
	pdb, err := repository.Open(ctx, u.String())
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	defer pdb.Close()
	sid := uuid.New()
	if _, err := pdb.ExecContext(ctx, "INSERT INTO sessions (id, name) VALUES (?, 'bench-fill')", sid); err != nil {
		cleanup()
		return nil, nil, err
	}
	if _, err := pdb.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
		SELECT gen_random_uuid(), ?, 'assistant', repeat('x', 500),
		       jsonb_build_object('message_index', g, 'entity_key', 'session-' || ? || '-msg-' || g, 'timestamp', null),
		       'bench', 'bench', now() + g * interval '1 microsecond', now()
		FROM generate_series(0, ?) g`, sid, sid.String(), n-1); err != nil {
		cleanup()
		return nil, nil, err
	}
	if _, err := pdb.ExecContext(ctx, "ANALYZE messages"); err != nil {
		cleanup()
		return nil, nil, err
	}
	// Keys all over the table, one at random per run (see bench_server.py).
	keys := make([]string, 0, 64)
	for i := range 64 {
		keys = append(keys, fmt.Sprintf("session-%s-msg-%d", sid, (2*i+1)*n/128))
	}
	return p.op(map[string]any{"op": "lookup", "keys": keys, "user": "bench"}), cleanup, nil
}

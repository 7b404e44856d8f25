package sessionstore_test

import (
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// tracer records every statement a connection sends, with its arguments.
type tracer struct {
	mu    sync.Mutex
	stmts []traced
}

type traced struct {
	sql  string
	args []any
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	t.stmts = append(t.stmts, traced{d.SQL, d.Args})
	t.mu.Unlock()
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *tracer) take() []traced {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.stmts
	t.stmts = nil
	return out
}

var taskCount = regexp.MustCompile(`Task Count: (\d+)`)

// On Citus every store, load and lookup of a session reads and writes one
// shard. The statements each call really sends are recorded by a pgx tracer
// and each is run through Citus's EXPLAIN: every one that touches a
// distributed table must say "Task Count: 1". A key cut to 255 code points
// names no session, so its lookup is the one allowed to fan out.
func TestCitusSingleShard(t *testing.T) {
	t.Parallel()
	url := dbtest.NewCitusURL(t)
	ctx := context.Background()
	tr := &tracer{}
	db, err := repository.OpenWith(ctx, url, repository.Options{Configure: func(c *pgx.ConnConfig) { c.Tracer = tr }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	explainDB := dbtest.OpenRaw(t, url)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	// A session the peer wrote part of (rows without keys) exercises the
	// load's extra probe and the lookup by position.
	sid, _ := s.SessionUUID("chat-1")
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := dbtest.PeerStore(ctx, explainDB, sid, "alice", []dbtest.PeerMessage{
		{Role: "user", Content: "peer question"}, {Role: "assistant", Content: strings.Repeat("peer answer ", 5)},
	}, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
		t.Fatal(err)
	}
	tr.take()

	long := strings.Repeat("a long answer ", 10)
	var keys []string
	ops := []struct {
		name   string
		fanOut bool // may touch more than one shard
		run    func() error
	}{
		{"store", false, func() error {
			r, err := s.Store(ctx, "chat-1", []models.HistoryMessage{msg("user", "q"), msg("assistant", long)}, sessionstore.StoreOptions{})
			keys = r.Keys
			return err
		}},
		// One delegated call from the coordinator; inside it, on the
		// worker, the check that no other session holds a caller id reads
		// every shard, which EXPLAIN of the call cannot show.
		{"store with caller ids", true, func() error {
			m := msg("user", "again")
			m.ID = uuid.NewString()
			_, err := s.Store(ctx, "chat-1", []models.HistoryMessage{m}, sessionstore.StoreOptions{})
			return err
		}},
		{"load", false, func() error {
			h, err := s.Load(ctx, "chat-1", sessionstore.LoadOptions{})
			if err == nil && len(h) != 5 {
				err = fmt.Errorf("load: %d messages, want 5", len(h))
			}
			return err
		}},
		{"lookup by stored key", false, func() error {
			got, err := s.Lookup(ctx, "REM LOOKUP "+keys[1])
			if err == nil && got != long {
				err = fmt.Errorf("lookup %s = %q", keys[1], got)
			}
			return err
		}},
		{"lookup by the peer's position", false, func() error {
			_, err := s.Lookup(ctx, compressor.BuildKey(sid.String(), 1))
			return err
		}},
		{"lookup of a cut key", true, func() error {
			_, err := s.Lookup(ctx, compressor.TruncateKey("session-"+strings.Repeat("x", 300)+"-msg-1"))
			if err != nil && !strings.Contains(err.Error(), "not found") {
				return err
			}
			return nil
		}},
	}
	for _, op := range ops {
		if err := op.run(); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		distributed := 0
		for _, st := range tr.take() {
			if !strings.Contains(st.sql, "messages") && !strings.Contains(st.sql, "sessions") &&
				!strings.Contains(st.sql, migrations.StoreFunction) {
				continue
			}
			plan := explain(t, conn, st)
			counts := taskCount.FindAllStringSubmatch(plan, -1)
			if len(counts) == 0 {
				continue // a catalog query, or no distributed table in it
			}
			distributed++
			for _, c := range counts {
				if c[1] != "1" && !op.fanOut {
					t.Errorf("%s: %s\n sends a statement on %s shards:\n%s\n%s", op.name, "Task Count: "+c[1], c[1], oneLine(st.sql), plan)
				}
			}
			t.Logf("%s: Task Count %s: %.120s", op.name, counts[0][1], oneLine(st.sql))
		}
		if distributed == 0 {
			t.Errorf("%s: no statement on a distributed table was seen", op.name)
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// explain runs EXPLAIN of one recorded statement with its arguments.
func explain(t *testing.T, conn *pgx.Conn, st traced) string {
	t.Helper()
	var args []any
	for _, a := range st.args {
		if _, mode := a.(pgx.QueryExecMode); !mode {
			args = append(args, a)
		}
	}
	rows, err := conn.Query(context.Background(), "EXPLAIN "+st.sql, args...)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", oneLine(st.sql), err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", oneLine(st.sql), err)
	}
	return strings.Join(lines, "\n")
}

// citusNodeURL is the URL of database dbname on node host:port.
func citusNodeURL(hostport, dbname string) string {
	return "postgres://postgres@" + hostport + "/" + dbname + "?sslmode=disable"
}

// newCitusDatabase makes a Citus cluster of its own inside the shared one: a
// new database on the coordinator and on each worker, with the extension and
// its own node list, so that a rebalance there moves only its shards, not
// those of the tests running beside it. spare is created but not added.
func newCitusDatabase(t *testing.T) (coordinator string, workers []string, spare string) {
	t.Helper()
	base := dbtest.CitusURL(t)
	ws := strings.Split(os.Getenv("REMSTORE_TEST_CITUS_WORKERS"), ",")
	spare = os.Getenv("REMSTORE_TEST_CITUS_SPARE")
	if len(ws) < 2 || spare == "" {
		t.Fatalf("REMSTORE_TEST_CITUS_WORKERS (%q) and REMSTORE_TEST_CITUS_SPARE (%q) must name the workers (scripts/citus.sh)", ws, spare)
	}
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	coordHost := u.Host
	name := fmt.Sprintf("rebalance_%d", time.Now().UnixNano())
	ctx := context.Background()
	for _, hp := range append([]string{coordHost, spare}, ws...) {
		admin, err := pgx.Connect(ctx, citusNodeURL(hp, "postgres"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create database on %s: %v", hp, err)
		}
		_ = admin.Close(ctx)
		c, err := pgx.Connect(ctx, citusNodeURL(hp, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "CREATE EXTENSION citus"); err != nil {
			t.Fatalf("create extension on %s: %v", hp, err)
		}
		_ = c.Close(ctx)
		t.Cleanup(func() {
			if admin, err := pgx.Connect(context.Background(), citusNodeURL(hp, "postgres")); err == nil {
				_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
				_ = admin.Close(context.Background())
			}
		})
	}
	coordinator = citusNodeURL(coordHost, name)
	c, err := pgx.Connect(ctx, coordinator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	host, port, _ := strings.Cut(coordHost, ":")
	if _, err := c.Exec(ctx, "SELECT citus_set_coordinator_host($1, $2::int)", host, port); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		h, p, _ := strings.Cut(w, ":")
		if _, err := c.Exec(ctx, "SELECT citus_add_node($1, $2::int)", h, p); err != nil {
			t.Fatalf("add node %s: %v", w, err)
		}
	}
	return coordinator, ws, spare
}

// Growing the cluster loses nothing: a third worker joins and the shards are
// rebalanced onto it (citus_rebalance_start, then citus_rebalance_wait) while
// 8 writers store turns. Afterwards every acknowledged message is there
// once, in order, and every key resolves to its text.
func TestCitusRebalanceUnderWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coordinator, _, spare := newCitusDatabase(t)
	db := dbtest.OpenRaw(t, coordinator)
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := citus.Distribute(ctx, db, citus.DistributeOptions{ShardCount: 8}); err != nil {
		t.Fatal(err)
	}
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	// Some data first, so the moves copy rows, not empty shards.
	for i := range 64 {
		if _, err := s.Store(ctx, fmt.Sprintf("pre-%d", i), []models.HistoryMessage{msg("user", "q"), msg("assistant", strings.Repeat("x", 300))}, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	type ack struct{ key, content string }
	const writers = 8
	acked := make([][]ack, writers)
	failed := make([]int, writers)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := fmt.Sprintf("writer-%d", w)
			for turn := 0; ; turn++ {
				select {
				case <-done:
					return
				default:
				}
				q := fmt.Sprintf("question %d of writer %d", turn, w)
				a := fmt.Sprintf("answer %d of writer %d: %s", turn, w, strings.Repeat("long ", 10))
				r, err := s.Store(ctx, sess, []models.HistoryMessage{msg("user", q), msg("assistant", a)}, sessionstore.StoreOptions{})
				if err != nil {
					failed[w]++
					t.Logf("writer %d turn %d: %v (not acknowledged)", w, turn, err)
					continue
				}
				acked[w] = append(acked[w], ack{r.Keys[0], q}, ack{r.Keys[1], a})
				time.Sleep(20 * time.Millisecond) // a turn every 20 ms or so per writer, as agents pace them
			}
		}()
	}

	c, err := pgx.Connect(ctx, coordinator)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	time.Sleep(300 * time.Millisecond) // writers under way before the node joins
	h, p, _ := strings.Cut(spare, ":")
	if _, err := c.Exec(ctx, "SELECT citus_add_node($1, $2::int)", h, p); err != nil {
		close(done)
		wg.Wait()
		t.Fatal(err)
	}
	start := time.Now()
	var job int64
	err = c.QueryRow(ctx, "SELECT citus_rebalance_start()").Scan(&job)
	if err == nil {
		_, err = c.Exec(ctx, "SELECT citus_rebalance_wait()")
	}
	took := time.Since(start)
	time.Sleep(300 * time.Millisecond) // and still writing after it
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatalf("rebalance: %v", err)
	}
	var moved, onSpare int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_dist_background_task WHERE job_id = $1 AND status = 'done'", job).Scan(&moved); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_dist_shard_placement WHERE nodeport = $1::int", p).Scan(&onSpare); err != nil {
		t.Fatal(err)
	}
	if onSpare == 0 || moved == 0 {
		t.Fatalf("rebalance moved %d shard groups; %d shards on the new worker", moved, onSpare)
	}

	total, fails := 0, 0
	for w := range writers {
		sess := fmt.Sprintf("writer-%d", w)
		hist, err := s.Load(ctx, sess, sessionstore.LoadOptions{NoCompress: true})
		if err != nil {
			t.Fatal(err)
		}
		// Acknowledged messages appear once each, in order; a message of a
		// call that reported an error may or may not be there.
		seen := map[string]int{}
		var got []string
		for _, m := range hist {
			seen[m.Content]++
			got = append(got, m.Content)
		}
		i := 0
		for _, c := range got {
			if i < len(acked[w]) && c == acked[w][i].content {
				i++
			}
		}
		if i != len(acked[w]) {
			t.Errorf("%s: only %d of %d acknowledged messages found in order", sess, i, len(acked[w]))
		}
		for _, a := range acked[w] {
			if seen[a.content] != 1 {
				t.Errorf("%s: %q stored %d times", sess, a.content, seen[a.content])
			}
			if !strings.HasPrefix(a.content, "answer") {
				continue // keys of questions resolve to nothing: lookups return answers only
			}
			if got, err := s.Lookup(ctx, a.key); err != nil || got != a.content {
				t.Errorf("%s: key %s -> %q, %v; want %q", sess, a.key, got, err, a.content)
			}
		}
		if failed[w] == 0 && len(got) != len(acked[w]) {
			t.Errorf("%s: %d messages stored, %d acknowledged, no call failed", sess, len(got), len(acked[w]))
		}
		total += len(acked[w])
		fails += failed[w]
	}
	t.Logf("rebalance onto a third worker: %d shard moves in %v (%d shards now on it); %d writers, %d messages acknowledged, %d calls failed",
		moved, took.Round(time.Millisecond), onSpare, writers, total, fails)
	if total < writers*4 {
		t.Errorf("only %d messages acknowledged: the writers did not run during the rebalance", total)
	}
}

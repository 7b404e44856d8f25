package bench

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
	"github.com/remstore/remstore/transfer"
)

// Op is one timed operation.
type Op func(ctx context.Context) error

// Workload is one measured thing: remstore's operation and, on PostgreSQL, its floor.
type Workload struct {
	Name string
	Rows int // rows handled per operation (for rows/s)
	Size int // table size or batch size the name refers to
	Run  Op
	// Setup, when set, runs before each Run, untimed: it prepares the
	// run's input (the import's fresh ids), which is not the work measured.
	Setup func()
	// Repeat, when over 1, times blocks of that many back-to-back calls and
	// reports the mean call of each block: a call of tens of microseconds
	// is otherwise measured as much by the clock and the scheduler as by
	// what it does. Remstore, the floor and the peer get the same blocks.
	Repeat int
	Floor  Op // nil when there is none (SQLite)
	// FloorDef says what the floor does, printed beside its ratio: a
	// ratio means nothing without what it divides by.
	FloorDef string
	Peer     PeerOp // the Python service's own code doing the same; nil without Env.Peer
}

// PeerOp runs the peer's operation n times and returns the durations it measured.
type PeerOp func(ctx context.Context, n int) ([]time.Duration, error)

// Env is a database prepared for benchmarks: a schema of its own on
// PostgreSQL (dropped by Close) or a SQLite file.
type Env struct {
	DB    *repository.DB
	Conn  *pgx.Conn // PostgreSQL only: the floor's native connection
	Store *sessionstore.Store
	URL   string // the database, in the benchmark's own schema
	// Peer, when set (StartPeer on URL), puts the Python service's own code
	// beside the workloads it has: store a turn, load, load+convert, lookup.
	Peer *Peer
	// Citus is set when the database is a Citus coordinator with workers:
	// Open distributes the benchmark's tables there, as remstore citus
	// distribute would.
	Citus *citus.State
	close func()
}

// Close drops what Open created.
func (e *Env) Close() { e.close() }

// Open prepares dbURL for benchmarks. On PostgreSQL it creates a throwaway
// schema so a real database is left as it was; a SQLite file has no schema
// to throw away, so one that holds sessions already is refused.
func Open(ctx context.Context, dbURL string) (*Env, error) {
	db, err := repository.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	e := &Env{DB: db, URL: dbURL, close: func() { _ = db.Close() }}
	if !repository.IsPostgres(db) {
		if err := unusedFile(ctx, db, dbURL); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	if repository.IsPostgres(db) {
		schema := "remstore_bench_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "")
		if _, err := db.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
			_ = db.Close()
			return nil, err
		}
		// Until the benchmark's own connections are up, the first one drops
		// the schema again if they fail (a pooler refusing search_path).
		failed := func(err error) (*Env, error) {
			if e.DB != nil && e.DB != db {
				_ = e.DB.Close()
			}
			_, _ = db.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
			_ = db.Close()
			return nil, err
		}
		e.URL = withSearchPath(dbURL, schema)
		if e.DB, err = repository.Open(ctx, e.URL); err != nil {
			return failed(err)
		}
		// pgxpool's parser takes the pool_* parameters out of the URL
		// (pool_max_conns=N); pgx's alone would send them to the server.
		pcfg, err := pgxpool.ParseConfig(e.URL)
		if err != nil {
			return failed(err)
		}
		if e.Conn, err = pgx.ConnectConfig(ctx, pcfg.ConnConfig); err != nil {
			return failed(err)
		}
		_ = db.Close()
		dbx := e.DB
		e.close = func() {
			_, _ = dbx.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
			_ = e.Conn.Close(context.Background())
			_ = dbx.Close()
		}
		if err := inSchema(ctx, e.DB, schema); err != nil {
			e.Close()
			return nil, err
		}
	}
	if err := migrations.Up(ctx, e.DB); err != nil {
		e.Close()
		return nil, err
	}
	if e.Conn != nil {
		st, err := citus.Status(ctx, e.DB)
		if err != nil {
			e.Close()
			return nil, err
		}
		if st.Version != "" && st.Workers > 0 {
			if _, err := citus.Distribute(ctx, e.DB, citus.DistributeOptions{}); err != nil {
				e.Close()
				return nil, err
			}
			if st, err = citus.Status(ctx, e.DB); err != nil {
				e.Close()
				return nil, err
			}
			e.Citus = &st
		}
	}
	e.Store, err = sessionstore.New(e.DB, sessionstore.Options{UserID: "bench"})
	return e, err
}

// withSearchPath is the PostgreSQL connection string dbURL with search_path
// set to schema: a URL's query parameter, or a keyword DSN's last key (which
// wins over an earlier one), the two forms --db takes.
func withSearchPath(dbURL, schema string) string {
	if settings.IsKeywordDSN(dbURL) {
		return strings.TrimRight(dbURL, " \t\n") + " search_path=" + schema
	}
	u, err := url.Parse(dbURL)
	if err != nil { // repository.Open has parsed it already
		return dbURL
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// unusedFile refuses a SQLite file that holds sessions: the benchmark
// writes tens of thousands of made-up messages into the file it is given
// and leaves them there, and without --db that file is the embedded
// default, the user's own conversations.
func unusedFile(ctx context.Context, db *repository.DB, path string) error {
	var tables int
	if err := db.NewRaw("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'sessions'").Scan(ctx, &tables); err != nil {
		return err
	}
	if tables == 0 {
		return nil
	}
	var used bool
	if err := db.NewRaw("SELECT EXISTS (SELECT 1 FROM sessions)").Scan(ctx, &used); err != nil {
		return err
	}
	if used {
		return fmt.Errorf("bench: %s holds sessions already, and bench would leave its own made-up ones beside them (SQLite has no throwaway schema); give --db a new file of its own, e.g. --db /tmp/remstore-bench.db, or a PostgreSQL URL", path)
	}
	return nil
}

// inSchema refuses a connection where the throwaway schema did not take
// (a pooler's ignore_startup_parameters drops search_path) and remstore's
// tables are there already: the benchmark would write into them. An empty
// database is used as it is (tables of its own, left there).
func inSchema(ctx context.Context, db *repository.DB, schema string) error {
	var current string
	var messages bool
	if err := db.NewRaw("SELECT current_schema(), to_regclass('messages') IS NOT NULL").Scan(ctx, &current, &messages); err != nil {
		return err
	}
	if current != schema && messages {
		return fmt.Errorf("bench: the connection ignores search_path (schema %q instead of %s: a pooler's ignore_startup_parameters?) and the database holds remstore's tables; run bench on an empty database of its own, or without the pooler", current, schema)
	}
	return nil
}

// Turn is a realistic 4-message turn: prompt, long answer, tool result, short answer.
func Turn(i int) []models.HistoryMessage {
	return []models.HistoryMessage{
		{Role: "user", Content: fmt.Sprintf("question %d: what are the options for the trip?", i)},
		{Role: "assistant", Content: strings.Repeat("Here is a detailed answer with several options. ", 12)},
		{Role: "tool", Content: `{"status":"success","results":[1,2,3]}`, ToolCallID: fmt.Sprintf("call_%d", i), ToolName: "search", ToolArguments: []byte(`{"q":"trip"}`)},
		{Role: "assistant", Content: "Done."},
	}
}

func messages(n int) []models.HistoryMessage {
	var out []models.HistoryMessage
	for i := 0; len(out) < n; i++ {
		out = append(out, Turn(i)...)
	}
	return out[:n]
}

// repeatFor is Workload.Repeat for a load of n messages: blocks for the
// sub-millisecond ones.
func repeatFor(n int) int {
	if n <= 100 {
		return 10
	}
	return 1
}

// fill writes n messages into session key (in batches of 1000).
func (e *Env) fill(ctx context.Context, key string, n int) error {
	all := messages(n)
	for lo := 0; lo < n; lo += 1000 {
		if _, err := e.Store.Store(ctx, key, all[lo:min(lo+1000, n)], sessionstore.StoreOptions{}); err != nil {
			return err
		}
	}
	return nil
}

// fillTable brings the messages table to n rows with generated SQL (every
// row a keyed assistant message of its own session-sized chunk).
func (e *Env) fillTable(ctx context.Context, n int) error {
	var have int
	if err := e.DB.NewRaw("SELECT count(*) FROM messages").Scan(ctx, &have); err != nil {
		return err
	}
	if have >= n {
		return nil
	}
	sid := uuid.New()
	if _, err := e.DB.ExecContext(ctx, "INSERT INTO sessions (id, name) VALUES (?, 'bench-fill')", sid); err != nil {
		return err
	}
	_, err := e.DB.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
		SELECT gen_random_uuid(), ?, 'assistant', repeat('x', 500),
		       jsonb_build_object('message_index', g, 'entity_key', 'session-' || ? || '-msg-' || g, 'timestamp', null),
		       'bench', 'bench', now() + g * interval '1 microsecond', now()
		FROM generate_series(?, ?) g`, sid, sid.String(), have, n-1)
	if err == nil {
		_, err = e.DB.ExecContext(ctx, "ANALYZE messages")
	}
	return err
}

// Sizes scales the workloads; Quick is what CI runs (-benchtime=1x).
type Sizes struct {
	Load    []int // messages in the loaded session
	Lookups []int // rows in the table
	Import  int
	Sweep   []int // messages in the session a turn is stored into
}

// String says the sizes in words, as bench prints them.
func (s Sizes) String() string {
	list := func(ns []int) string {
		out := make([]string, len(ns))
		for i, n := range ns {
			out[i] = strconv.Itoa(n)
		}
		return strings.Join(out, ", ")
	}
	return fmt.Sprintf("loads of %s messages; lookups in %s rows; an import of %d; turns into sessions of %s",
		list(s.Load), list(s.Lookups), s.Import, list(s.Sweep))
}

var (
	Full = Sizes{Load: []int{10, 1000, 100_000}, Lookups: []int{10_000, 100_000, 1_000_000}, Import: 100_000,
		Sweep: []int{20, 1000, 10_000, 100_000, 1_000_000}}
	Quick = Sizes{Load: []int{10, 1000, 5000}, Lookups: []int{2000, 5000, 10_000}, Import: 5000, Sweep: []int{20, 1000, 10_000}}
)

// Workloads prepares every workload on e (filling tables as needed).
func (e *Env) Workloads(ctx context.Context, sz Sizes) ([]Workload, error) {
	var out []Workload
	for _, part := range []func(context.Context, Sizes) ([]Workload, error){e.storeWorkloads, e.loadWorkloads, e.AgentWorkloads, e.lookupWorkloads, e.importWorkloads} {
		ws, err := part(ctx, sz)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	return out, nil
}

// storeWorkloads store a 4-message turn (plain and guarded) and 100 messages.
func (e *Env) storeWorkloads(ctx context.Context, _ Sizes) ([]Workload, error) {
	var out []Workload
	pg := e.Conn != nil
	seq := 0
	// store a 4-message turn, and 100 messages
	for _, n := range []int{4, 100} {
		key := fmt.Sprintf("store-%d", n)
		batch := messages(n)
		w := Workload{Name: fmt.Sprintf("store %d messages", n), Rows: n, Size: n,
			Run: func(ctx context.Context) error {
				_, err := e.Store.Store(ctx, key, batch, sessionstore.StoreOptions{})
				return err
			}}
		if pg {
			fsid := uuid.New()
			w.Floor = func(ctx context.Context) error { seq++; return floorStore(ctx, e.Conn, fsid, batch, seq) }
			w.FloorDef = "native pgx: one pipelined batch (lock, session upsert, INSERT ... SELECT of the rows)"
		}
		if e.Peer != nil && n == 4 {
			// The peer stores into a session of its own, 20 messages long to start.
			psid := uuid.NewString()
			if _, err := e.Peer.Do(map[string]any{"op": "store", "sid": psid, "user": "bench", "turn": dicts(batch), "n": 5}); err != nil {
				return nil, err
			}
			w.Peer = e.Peer.op(map[string]any{"op": "store", "sid": psid, "user": "bench", "turn": dicts(batch)})
		}
		out = append(out, w)
	}
	// The same 4-message turn, guarded: each store names the last message
	// the one before it left (what a guarded turn pays: one index probe).
	guarded, batch := "store-4-guarded", messages(4)
	last := sessionstore.Empty
	out = append(out, Workload{Name: "store 4 messages, guarded", Rows: 4, Size: 4,
		Run: func(ctx context.Context) error {
			res, err := e.Store.Store(ctx, guarded, batch, sessionstore.StoreOptions{ExpectLast: last})
			last = res.Last
			return err
		}})
	return out, nil
}

// loadWorkloads load and compress sessions of sz.Load messages, and convert
// 1,000 to pydantic-ai JSON.
func (e *Env) loadWorkloads(ctx context.Context, sz Sizes) ([]Workload, error) {
	var out []Workload
	pg := e.Conn != nil
	// load + compress
	for _, n := range sz.Load {
		key := fmt.Sprintf("load-%d", n)
		if err := e.fill(ctx, key, n); err != nil {
			return nil, err
		}
		sid, _ := e.Store.SessionUUID(key)
		w := Workload{Name: fmt.Sprintf("load+compress %d", n), Rows: n, Size: n, Repeat: repeatFor(n),
			Run: func(ctx context.Context) error {
				h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{})
				if err == nil && len(h) != n {
					err = fmt.Errorf("loaded %d of %d", len(h), n)
				}
				return err
			}}
		if pg {
			w.Floor = func(ctx context.Context) error { return floorLoad(ctx, e.Conn, sid, n) }
			w.FloorDef = "native pgx: one SELECT of the columns a plain load prints, raw bytes kept (no history built)"
		}
		if e.Peer != nil && n == 1000 {
			w.Peer = e.Peer.op(map[string]any{"op": "load", "sid": sid.String(), "user": "bench"})
		}
		out = append(out, w)
		if pg && n == 1000 {
			// The same load beside a floor that builds the same history.
			h := w
			h.Name, h.Peer = "load+compress 1000, history floor", nil
			h.Floor = func(ctx context.Context) error { return floorHistory(ctx, e.Conn, sid, n) }
			h.FloorDef = "native pgx: the same SELECT scanned into []models.HistoryMessage (nothing compressed)"
			out = append(out, h)
		}
	}
	// The last 20 messages of the largest session by time (since=): an
	// index range from there, whatever the session's length (issue 45).
	if n := sz.Load[len(sz.Load)-1]; n > 20 {
		key := fmt.Sprintf("load-%d", n)
		h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
		if err != nil {
			return nil, err
		}
		since, err := models.ParseTimestamp(*h[len(h)-21].Timestamp)
		if err != nil {
			return nil, err
		}
		out = append(out, Workload{Name: fmt.Sprintf("load since: last 20 of %d", n), Rows: 20, Size: n, Repeat: 20,
			Run: func(ctx context.Context) error {
				h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{Since: since})
				if err == nil && len(h) != 20 {
					err = fmt.Errorf("loaded %d of the last 20", len(h))
				}
				return err
			}})
	}
	// load + convert 1k to pydantic-ai JSON bytes
	conv := Workload{Name: "load+compress+convert 1000", Rows: 1000, Size: 1000,
		Run: func(ctx context.Context) error {
			h, err := e.Store.Load(ctx, "load-1000", sessionstore.LoadOptions{})
			if err != nil {
				return err
			}
			_, err = convert.JSON(h, convert.Options{SystemPrompt: "You are a benchmark."})
			return err
		}}
	if e.Peer != nil {
		sid, _ := e.Store.SessionUUID("load-1000")
		conv.Peer = e.Peer.op(map[string]any{"op": "convert", "sid": sid.String(), "user": "bench"})
	}
	out = append(out, conv)
	return out, nil
}

// lookupWorkloads look a key up in tables of sz.Lookups rows.
func (e *Env) lookupWorkloads(ctx context.Context, sz Sizes) ([]Workload, error) {
	var out []Workload
	pg := e.Conn != nil
	// lookup at growing table sizes
	for _, n := range sz.Lookups {
		if !pg && n > sz.Lookups[0] {
			break
		}
		if pg {
			if err := e.fillTable(ctx, n); err != nil {
				return nil, err
			}
		}
		res, err := e.Store.Store(ctx, fmt.Sprintf("lookup-%d", n), Turn(n), sessionstore.StoreOptions{})
		if err != nil {
			return nil, err
		}
		key, sid := res.Keys[1], res.SessionID
		w := Workload{Name: fmt.Sprintf("lookup in %d rows", n), Rows: 1, Size: n, Repeat: 20,
			Run: func(ctx context.Context) error { _, err := e.Store.Lookup(ctx, key); return err }}
		if e.Peer != nil {
			w.Peer = e.Peer.op(map[string]any{"op": "lookup", "key": key, "user": "bench"})
		}
		if pg {
			w.FloorDef = "native pgx: the same probe, a cached prepared statement"
			w.Floor = func(ctx context.Context) error {
				var s string
				// The key names its session, as remstore's probe does: one
				// shard on Citus, a recheck on one server.
				return e.Conn.QueryRow(ctx, "SELECT content FROM messages WHERE metadata->>'entity_key' = $1 AND tenant_id = $2 AND deleted_at IS NULL AND session_id = $3 LIMIT 1",
					key, "bench", [16]byte(sid)).Scan(&s)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// importWorkloads import an export of sz.Import messages.
func (e *Env) importWorkloads(ctx context.Context, sz Sizes) ([]Workload, error) {
	var out []Workload
	pg := e.Conn != nil
	// import
	var export bytes.Buffer
	if err := e.fill(ctx, "import-src", sz.Import); err != nil {
		return nil, err
	}
	if _, err := transfer.Export(ctx, e.DB, &export, transfer.ExportOptions{SessionID: "import-src", TenantID: "bench"}); err != nil {
		return nil, err
	}
	data := export.Bytes()
	var input []byte
	out = append(out, Workload{Name: fmt.Sprintf("import %d", sz.Import), Rows: sz.Import, Size: sz.Import,
		// re-import under fresh ids so every run writes every row
		Setup: func() { input = reID(data) },
		Run: func(ctx context.Context) error {
			_, err := transfer.Import(ctx, e.DB, bytes.NewReader(input), transfer.ImportOptions{BatchSize: 5000, AllTenants: true})
			return err
		}})
	if pg {
		rows, err := exportRows(data)
		if err != nil {
			return nil, err
		}
		out[len(out)-1].Floor = func(ctx context.Context) error { return floorCopy(ctx, e.Conn, rows) }
		out[len(out)-1].FloorDef = "native pgx: CopyFrom of the same rows, decoded before the clock"
	}
	return out, nil
}

// reID gives every record of an export fresh ids (same session).
func reID(data []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	sid := uuid.New()
	var old []byte
	out := make([][]byte, 0, len(lines))
	for i, l := range lines {
		if i == 0 {
			old = l[bytes.Index(l, []byte(`"id":"`))+6:][:36]
		}
		l = bytes.ReplaceAll(l, old, []byte(sid.String()))
		if bytes.HasPrefix(l, []byte(`{"kind":"message","id":"`)) {
			p := len(`{"kind":"message","id":"`)
			l = append(append(append([]byte{}, l[:p]...), uuid.NewString()...), l[p+36:]...)
		}
		out = append(out, l)
	}
	return append(bytes.Join(out, []byte("\n")), '\n')
}

// Result is a workload's measured figures.
type Result struct {
	Name        string  `json:"name"`
	Size        int     `json:"size"`
	Iterations  int     `json:"iterations"`
	MedianMS    float64 `json:"median_ms"`
	P95MS       float64 `json:"p95_ms"`
	RowsPerSec  float64 `json:"rows_per_sec"`
	FloorMS     float64 `json:"floor_median_ms,omitempty"`
	RatioFloor  float64 `json:"ratio_to_floor,omitempty"`
	FloorDef    string  `json:"floor,omitempty"` // what the floor does (Workload.FloorDef)
	FloorRowsPS float64 `json:"floor_rows_per_sec,omitempty"`
	PeerMS      float64 `json:"peer_median_ms,omitempty"`
	PeerP95MS   float64 `json:"peer_p95_ms,omitempty"`
	RatioPeer   float64 `json:"peer_over_remstore,omitempty"` // how many times faster remstore is
	// Statements per operation on the server (pg_stat_statements), -1 unknown.
	Statements *Statements `json:"statements,omitempty"`
}

// measure times iters samples of op, each the mean of repeat calls, in
// the steady state the process is in: no collection is forced before a
// sample. Collecting the heap before each block (as this did) timed the
// floor, which makes little garbage, and remstore, which makes more,
// unlike: a block of small loads then never paid for its own garbage, and
// the floor's blocks started on a cold heap (issue 57: a 0.010 ms
// statement's floor read 0.11-0.15 ms). Each pays for its own garbage
// now, as it would in a service.
func measure(ctx context.Context, op Op, iters, repeat int) ([]time.Duration, error) {
	repeat = max(repeat, 1)
	d := make([]time.Duration, 0, iters)
	for range iters {
		start := time.Now()
		for range repeat {
			if err := op(ctx); err != nil {
				return nil, err
			}
		}
		d = append(d, time.Since(start)/time.Duration(repeat))
	}
	slices.Sort(d)
	return d, nil
}

func pct(d []time.Duration, p float64) float64 {
	i := int(float64(len(d)-1) * p)
	return float64(d[i].Microseconds()) / 1000
}

// Measure runs a workload iters times (alternating with its floor and the
// peer, so all see the same machine state) and summarizes. The peer goes
// first; remstore and the floor take turns to follow it, since what the
// peer's process does after its timed call (its pool resets the
// connection) lands on whoever comes next.
func Measure(ctx context.Context, w Workload, iters int) (Result, error) {
	r := Result{Name: w.Name, Size: w.Size, Iterations: iters}
	var runs, floors, peers []time.Duration
	for i := range iters {
		if w.Peer != nil { // the same blocks as remstore's: the mean call of Repeat
			d, err := w.Peer(ctx, max(w.Repeat, 1))
			if err != nil {
				return r, fmt.Errorf("%s peer: %w", w.Name, err)
			}
			var sum time.Duration
			for _, x := range d {
				sum += x
			}
			peers = append(peers, sum/time.Duration(max(len(d), 1)))
		}
		run := func() error {
			if w.Setup != nil {
				w.Setup()
			}
			d, err := measure(ctx, w.Run, 1, w.Repeat)
			if err != nil {
				return fmt.Errorf("%s: %w", w.Name, err)
			}
			runs = append(runs, d...)
			return nil
		}
		floor := func() error {
			if w.Floor == nil {
				return nil
			}
			d, err := measure(ctx, w.Floor, 1, w.Repeat)
			if err != nil {
				return fmt.Errorf("%s floor: %w", w.Name, err)
			}
			floors = append(floors, d...)
			return nil
		}
		first, second := run, floor
		if i%2 == 1 {
			first, second = floor, run
		}
		if err := first(); err != nil {
			return r, err
		}
		if err := second(); err != nil {
			return r, err
		}
	}
	slices.Sort(runs)
	r.MedianMS, r.P95MS = pct(runs, 0.5), pct(runs, 0.95)
	r.RowsPerSec = float64(w.Rows) / (r.MedianMS / 1000)
	if len(peers) > 0 {
		slices.Sort(peers)
		r.PeerMS, r.PeerP95MS = pct(peers, 0.5), pct(peers, 0.95)
		r.RatioPeer = r.PeerMS / r.MedianMS
	}
	if len(floors) > 0 {
		slices.Sort(floors)
		r.FloorMS, r.FloorDef = pct(floors, 0.5), w.FloorDef
		r.RatioFloor = r.MedianMS / r.FloorMS
		r.FloorRowsPS = float64(w.Rows) / (r.FloorMS / 1000)
	}
	return r, nil
}

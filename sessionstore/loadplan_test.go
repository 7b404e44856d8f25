package sessionstore

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
)

// skewed makes a database whose messages are skewed as the benchmark's
// are: one session of 100,000 rows and a few small ones ("other-0".."other-4"
// of 3 messages, "small" of 10, all tenant "bench"), analyzed. s is bound to
// "bench".
func skewed(t *testing.T) (string, *repository.DB, *Store) {
	t.Helper()
	ctx := context.Background()
	url := dbtest.NewPostgresURL(t)
	db := dbtest.OpenRaw(t, url)
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	s, err := New(db, Options{UserID: "bench"})
	if err != nil {
		t.Fatal(err)
	}
	big := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO sessions (id, name) VALUES (?, 'big');
		INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
		SELECT gen_random_uuid(), ?, 'assistant', repeat('x', 300), jsonb_build_object('entity_key', 'k' || g), 'bench', 'bench',
		       now() + g * interval '1 microsecond', now() FROM generate_series(1, 100000) g`, big, big); err != nil {
		t.Fatal(err)
	}
	msgs := make([]models.HistoryMessage, 10)
	for i := range msgs {
		msgs[i] = models.HistoryMessage{Role: models.RoleUser, Content: fmt.Sprintf("m%d", i)}
	}
	for i := range 5 {
		if _, err := s.Store(ctx, fmt.Sprintf("other-%d", i), msgs[:3], StoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Store(ctx, "small", msgs, StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE messages"); err != nil {
		t.Fatal(err)
	}
	return url, db, s
}

// A load's rows run on a forced generic plan (pgDriver.eachRow, on
// repository.DB.LoadPool, whose connections force it and nothing else). That is
// safe only because the one plan of the rows query is a range of the
// (session_id, created_at, id) index, never a scan and sort: on a table
// skewed as the benchmark's is (one session of 100,000 rows, a few small
// ones), where PostgreSQL's own choice is a custom plan on every call, the
// generic plan must still be that, and load a 10-message session in order.
func TestLoadPlanIsGeneric(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url, db, s := skewed(t)
	small := "small"
	sid, _ := s.SessionUUID(small)
	// The load pool's connections start with the two settings; the main
	// pool's keep the server's plan_cache_mode (every other statement plans
	// as it would) and run without JIT too.
	setting := func(c *pgx.Conn) (mode, jit string) {
		t.Helper()
		if err := c.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('jit')").Scan(&mode, &jit); err != nil {
			t.Fatal(err)
		}
		return mode, jit
	}
	if db.LoadPool == nil {
		t.Fatal("no load pool on single-node PostgreSQL")
	}
	lc, err := db.LoadPool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Release()
	mc, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mc.Release()
	if mode, jit := setting(lc.Conn()); mode != "force_generic_plan" || jit != "off" {
		t.Fatalf("load pool: plan_cache_mode %s, jit %s", mode, jit)
	}
	if mode, jit := setting(mc.Conn()); mode != "auto" || jit != "off" {
		t.Fatalf("main pool: plan_cache_mode %s, jit %s", mode, jit)
	}
	// A compacted load's window starts at a row of the session (its
	// summary, its first kept row).
	var kept uuid.UUID
	if err := db.NewRaw("SELECT id FROM messages WHERE session_id = ? ORDER BY created_at, id LIMIT 1 OFFSET 5", sid).Scan(ctx, &kept); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		lastN int
		since time.Time
		from  uuid.UUID
	}{{0, time.Time{}, uuid.Nil}, {20, time.Time{}, uuid.Nil}, {0, time.Now().Add(-time.Hour), uuid.Nil}, {0, time.Time{}, kept}} {
		lastN := w.lastN
		q := rowsArgs{sid: sid, tenant: "bench", limit: noLimit, cut: 200, plain: true, unplanned: w.from == uuid.Nil, lastN: lastN, since: w.since, from: w.from,
			fromSummary: true}
		generic := explainRows(t, ctx, lc.Conn(), q)
		if !strings.Contains(generic, "session_id = $") {
			t.Fatalf("last %d: not a generic plan:\n%s", lastN, generic)
		}
		if !strings.Contains(generic, "Index Scan using remstore_messages_session_order") ||
			strings.Contains(generic, "Seq Scan") || strings.Contains(generic, "Sort") {
			t.Fatalf("last %d: the generic plan is not a range of the session index:\n%s", lastN, generic)
		}
		// The bounded load starts its range at the window: an index
		// condition, not a filter over the session's rows.
		// A load from the start does too: a compacted session's starts at
		// its first kept row, whatever the rows its summary covers.
		if w.since.IsZero() && !strings.Contains(generic, "ROW(messages.created_at, messages.id) >= ROW(") &&
			!strings.Contains(generic, "ROW(created_at, id) >= ROW(") {
			t.Fatalf("last %d: the window is not an index condition:\n%s", lastN, generic)
		}
		// A load since a time starts its range there (issue 45: it read
		// every row of the session and dropped the older ones in Go).
		if !w.since.IsZero() && !regexp.MustCompile(`Index Cond: .*created_at >= LEAST`).MatchString(generic) {
			t.Fatalf("since: the window is not an index condition:\n%s", generic)
		}
	}
	prepare := func(conn *pgx.Conn) {
		t.Helper()
		if _, err := conn.Exec(ctx, "PREPARE plan_test AS "+rowsTexts.pg[0].PG(), pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	explain := func(conn *pgx.Conn) string {
		t.Helper()
		return explainPrepared(t, ctx, conn, rowsArgs{sid: sid, tenant: "bench", limit: noLimit, cut: 200, plain: true, unplanned: true})
	}
	// What PostgreSQL chooses by itself after its five custom plans.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	prepare(conn)
	for range 6 {
		explain(conn)
	}
	t.Logf("PostgreSQL's own choice here: generic %v", strings.Contains(explain(conn), "session_id = $"))
	h, err := s.Load(ctx, small, LoadOptions{})
	if err != nil || len(h) != 10 || h[0].Content != "m0" || h[9].Content != "m9" {
		t.Fatalf("load: %v %v", h, err)
	}
}

// The store function's statements run on generic plans, prepared once per
// connection (store_batch_v4.sql), made from whatever statistics the table
// has then. Every statement a store runs, nested ones included
// (auto_explain sends each plan, with the rows each node read, to the
// client), reads messages by a probe: at most 2 rows a node, on a table
// never analyzed (where a join of the kept position read the session's
// rows) and on the skewed one. The writes: a first one (counted), common
// ones (the kept count), one after the peer's rows (counted from the kept
// row), one with caller ids. Only the two counts, which EXECUTE plans for
// their values, read more; on the skewed table nothing scans messages. The
// probes' plans must be generic (their conditions name $n), which fails if
// the function's plan_cache_mode is lost. With the per-user limits set the
// same holds, the tenant's sessions counted too (a scan of sessions there
// had a disabled plan, which JIT compiled: 100 ms a new session).
func TestStoreFunctionPlans(t *testing.T) {
	t.Parallel()
	for _, table := range []string{"never analyzed", "analyzed while tiny", "skewed"} {
		for _, limits := range []Limits{{}, {SessionMessages: 1 << 30, Sessions: 1000}} {
			name := table
			if limits != (Limits{}) {
				name += ", limits set"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				storePlans(t, table, limits)
			})
		}
	}
}

// dynamic matches the plan of a statement the function EXECUTEs, each
// marked so in its text.
var dynamic = regexp.MustCompile(`Query Text: /\* planned per call \*/`)

// disabled matches a plan cost that includes PostgreSQL's disable_cost (1e10).
var disabled = regexp.MustCompile(`cost=\d{10,}`)

var actualRows = regexp.MustCompile(`(?m)^.* on messages\b.*\(actual time=\S+ rows=(\d+) loops=\d+\)`)

func storePlans(t *testing.T, table string, limits Limits) {
	ctx := context.Background()
	var url string
	var db *repository.DB
	analyzed := table == "skewed"
	if analyzed {
		url, db, _ = skewed(t)
	} else {
		url = dbtest.NewPostgresURL(t)
		db = dbtest.OpenRaw(t, url)
		if err := migrations.Up(ctx, db); err != nil {
			t.Fatal(err)
		}
	}
	if table == "analyzed while tiny" { // one page each: a scan looks cheaper than a probe
		s, err := New(db, Options{UserID: "bench"})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := s.Store(ctx, fmt.Sprintf("seed-%d", i), []models.HistoryMessage{{Role: models.RoleUser, Content: "q", ID: uuid.NewString()}}, StoreOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.ExecContext(ctx, "ANALYZE messages; ANALYZE sessions; ANALYZE remstore_positions"); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var plans []string
	pdb, err := repository.OpenWith(ctx, url, repository.Options{Configure: func(c *pgx.ConnConfig) {
		c.RuntimeParams["session_preload_libraries"] = "auto_explain"
		c.RuntimeParams["auto_explain.log_min_duration"] = "0"
		c.RuntimeParams["auto_explain.log_nested_statements"] = "on"
		c.RuntimeParams["auto_explain.log_analyze"] = "on"
		c.RuntimeParams["auto_explain.log_level"] = "notice"
		c.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			mu.Lock()
			plans = append(plans, n.Message)
			mu.Unlock()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pdb.Close() })
	s, err := New(pdb, Options{UserID: "bench", Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	const writes = 30
	turn := []models.HistoryMessage{{Role: models.RoleUser, Content: "q"}, {Role: models.RoleAssistant, Content: "a"}}
	for i := range writes {
		if _, err := s.Store(ctx, "fresh", turn, StoreOptions{}); err != nil {
			t.Fatal(err)
		}
		if i == writes-5 { // the peer's rows after remstore's last write
			sid, _ := s.SessionUUID("fresh")
			// On pdb: the plans of migration 17's trigger are checked too
			// (its probe of the newest row reads one index entry).
			if _, err := pdb.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, tenant_id, user_id, created_at, updated_at)
				SELECT gen_random_uuid(), ?, 'user', 'peer', '{}', 'bench', 'bench', now() + interval '1 hour' + g * interval '1 microsecond', now()
				FROM generate_series(1, 2) g`, sid); err != nil {
				t.Fatal(err)
			}
		}
	}
	withIDs := []models.HistoryMessage{{Role: models.RoleUser, Content: "q", ID: uuid.NewString()}}
	if _, err := s.Store(ctx, "fresh", withIDs, StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var counts, generic, ordered int
	for _, p := range plans {
		if disabled.MatchString(p) { // enable_seqscan = off could not avoid a scan
			t.Errorf("a store statement has no plan but a disabled one (and JIT compiles such costs):\n%s", p)
		}
		if dynamic.MatchString(p) { // EXECUTE: planned for its values each time
			if strings.Contains(p, "count(*) FROM messages") {
				counts++
			}
			if analyzed && strings.Contains(p, "Seq Scan on messages") {
				t.Errorf("a statement scans messages:\n%s", p)
			}
			continue
		}
		for _, m := range actualRows.FindAllStringSubmatch(p, -1) {
			if n, _ := strconv.Atoi(m[1]); n > 2 {
				t.Errorf("a store statement read %d rows of messages:\n%s", n, p)
			}
		}
		if strings.Contains(p, "ORDER BY m.created_at DESC LIMIT 1") && strings.Contains(p, "session_id = $") {
			generic++
		}
		if strings.Contains(p, "m.session_id = NEW.session_id") {
			ordered++
		}
	}
	if ordered != 2 { // one probe per row of the peer's INSERT
		t.Errorf("%d plans of migration 17's probe of the newest row, want 2", ordered)
	}
	// One count: the first write's. The peer's rows are added to the kept
	// count as they arrive (migration 14), never counted by a store.
	if counts != 1 || generic < writes {
		t.Fatalf("%d plans seen, %d of them counts (want the first write's only), %d generic plans of the newest-row probe (want one per write):\n%s",
			len(plans), counts, generic, strings.Join(plans, "\n---\n"))
	}
}

// explainRows prepares q's rows query on conn and returns its plan.
func explainRows(t *testing.T, ctx context.Context, conn *pgx.Conn, q rowsArgs) string {
	t.Helper()
	if _, err := conn.Exec(ctx, "PREPARE plan_test AS "+rowsTexts.pg[q.window()].PG(), pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DEALLOCATE plan_test", pgx.QueryExecModeSimpleProtocol) //nolint:errcheck
	return explainPrepared(t, ctx, conn, q)
}

// explainPrepared is the plan of plan_test with q's arguments as literals.
func explainPrepared(t *testing.T, ctx context.Context, conn *pgx.Conn, q rowsArgs) string {
	t.Helper()
	lit := make([]string, 0, 60)
	for _, a := range rowsTexts.pg[q.window()].PGArgs(q.params()) {
		switch v := a.(type) {
		case uuid.UUID:
			lit = append(lit, "'"+v.String()+"'")
		case string:
			lit = append(lit, "'"+v+"'")
		case time.Time:
			lit = append(lit, "'"+v.Format(time.RFC3339Nano)+"'")
		default:
			lit = append(lit, fmt.Sprint(v))
		}
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE plan_test("+strings.Join(lit, ", ")+")", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// SQLite's planner, left to itself, finds a compacted load's first kept row
// through the session's index (session_id = ?), reading the rows the summary
// covers; its stored key's index finds it at once. The rows then come as a
// range of the session's index from it.
func TestCompactedPlanSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.NewSQLite(t)
	s, err := New(db, Options{UserID: "A"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := make([]models.HistoryMessage, 50)
	for i := range msgs {
		msgs[i] = models.HistoryMessage{Role: models.RoleUser, Content: fmt.Sprint(i)}
	}
	if _, err := s.Store(ctx, "x", msgs, StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(ctx, "x", DeterministicSummary, CompactOptions{KeepLast: 5}); err != nil {
		t.Fatal(err)
	}
	sid, _ := s.SessionUUID("x")
	p, err := s.loadPlan(ctx, sid, LoadOptions{})
	if err != nil || p.keptID == uuid.Nil || p.summaryID == uuid.Nil || p.summary != 50 || p.from != 45 {
		t.Fatalf("plan %+v: %v", p, err)
	}
	explain := func(text string, args []any) string {
		t.Helper()
		var lines []string
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+text, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, detail)
		}
		return strings.Join(lines, "\n")
	}
	st := planQueries[false]
	if plan := explain(st.Bun(), st.BunArgs(&planParams{Sid: sid, Tenant: "A", Prefix: keyPrefix(sid)})); !strings.Contains(plan, "USING INDEX remstore_messages_entity_key") {
		t.Fatalf("the kept row is not found by its key:\n%s", plan)
	}
	q := rowsArgs{sid: sid, tenant: "A", limit: noLimit, from: p.keptID}
	rt := rowsTexts.lite[q.window()]
	if plan := explain(rt.Bun(), rt.BunArgs(q.params())); !strings.Contains(plan, "remstore_messages_session_order (session_id=? AND (created_at,id)>") {
		t.Fatalf("the rows are not a range from the kept row:\n%s", plan)
	}
	// The load in one statement (rowsArgs.fromSummary) finds the kept row
	// by its key too, and ranges from it.
	q = rowsArgs{sid: sid, tenant: "A", limit: noLimit, unplanned: true, fromSummary: true}
	rt = rowsTexts.lite[q.window()]
	if plan := explain(rt.Bun(), rt.BunArgs(q.params())); !strings.Contains(plan, "USING INDEX remstore_messages_entity_key") ||
		!strings.Contains(plan, "remstore_messages_session_order (session_id=? AND (created_at,id)>") {
		t.Fatalf("the one-statement load does not range from the kept row found by its key:\n%s", plan)
	}
}

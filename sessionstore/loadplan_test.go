package sessionstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
)

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
		if _, err := s.StoreMessages(ctx, fmt.Sprintf("other-%d", i), msgs[:3], ""); err != nil {
			t.Fatal(err)
		}
	}
	small := "small"
	if _, err := s.StoreMessages(ctx, small, msgs, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE messages"); err != nil {
		t.Fatal(err)
	}
	sid, _ := s.SessionUUID(small)
	// The load pool's connections start with the two settings; the main
	// pool's keep the server's (every other statement plans as it would).
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
	if mode, jit := setting(mc.Conn()); mode != "auto" || jit != "on" {
		t.Fatalf("main pool: plan_cache_mode %s, jit %s", mode, jit)
	}
	lit := make([]string, 0, 40)
	for _, a := range (rowsArgs{sid: sid, tenant: "bench", limit: noLimit, cut: 200, plain: true, unplanned: true}).args() {
		switch v := a.(type) {
		case uuid.UUID:
			lit = append(lit, "'"+v.String()+"'")
		case string:
			lit = append(lit, "'"+v+"'")
		default:
			lit = append(lit, fmt.Sprint(v))
		}
	}
	prepare := func(conn *pgx.Conn) {
		t.Helper()
		if _, err := conn.Exec(ctx, "PREPARE plan_test AS "+rowsQueryPG, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
	}
	explain := func(conn *pgx.Conn) string {
		t.Helper()
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
	prepare(lc.Conn())
	generic := explain(lc.Conn())
	if _, err := lc.Conn().Exec(ctx, "DEALLOCATE plan_test", pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(generic, "session_id = $") {
		t.Fatalf("not a generic plan:\n%s", generic)
	}
	if !strings.Contains(generic, "Index Scan using remstore_messages_session_order") ||
		strings.Contains(generic, "Seq Scan") || strings.Contains(generic, "Sort") {
		t.Fatalf("the generic plan is not a range of the session index:\n%s", generic)
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

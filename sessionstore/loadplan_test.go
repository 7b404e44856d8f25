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

// A load's rows run on a forced generic plan (pgDriver.eachRow). That is
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
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Prepare(ctx, "q", rowsQueryPG); err != nil {
		t.Fatal(err)
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
	explain := func(mode string) string {
		t.Helper()
		if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, "EXPLAIN EXECUTE q("+strings.Join(lit, ", ")+")", pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatal(err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(lines, "\n")
	}
	// The driver's own settings statement: a generic plan, and no JIT (a
	// generic plan's cost on a skewed table crosses jit_above_cost, and
	// JIT compiles on every execution: 13.5 ms a load in the benchmark).
	var mode0, jit0, mode, jit string
	if err := conn.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('jit')").Scan(&mode0, &jit0); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, setGenericPlan); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('jit')").Scan(&mode, &jit); err != nil || mode != "force_generic_plan" || jit != "off" {
		t.Fatalf("after the driver's settings: plan_cache_mode %s, jit %s, %v", mode, jit, err)
	}
	for _, reset := range []string{resetPlanMode, resetJIT} {
		if _, err := conn.Exec(ctx, reset); err != nil {
			t.Fatal(err)
		}
	}
	if err := conn.QueryRow(ctx, "SELECT current_setting('plan_cache_mode'), current_setting('jit')").Scan(&mode, &jit); err != nil || mode != mode0 || jit != jit0 {
		t.Fatalf("after the driver's reset: plan_cache_mode %s, jit %s, %v", mode, jit, err)
	}
	generic := explain("force_generic_plan")
	if !strings.Contains(generic, "session_id = $") {
		t.Fatalf("not a generic plan:\n%s", generic)
	}
	if !strings.Contains(generic, "Index Scan using remstore_messages_session_order") ||
		strings.Contains(generic, "Seq Scan") || strings.Contains(generic, "Sort") {
		t.Fatalf("the generic plan is not a range of the session index:\n%s", generic)
	}
	// What PostgreSQL chooses by itself after its five custom plans.
	for range 6 {
		explain("auto")
	}
	t.Logf("PostgreSQL's own choice here: generic %v", strings.Contains(explain("auto"), "session_id = $"))
	h, err := s.Load(ctx, small, LoadOptions{})
	if err != nil || len(h) != 10 || h[0].Content != "m0" || h[9].Content != "m9" {
		t.Fatalf("load: %v %v", h, err)
	}
}

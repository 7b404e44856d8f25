package citus_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Distribute moves a database that already holds sessions to the workers in
// place: afterwards every message loads and every key resolves as before;
// a unique index without session_id gains it; a second run changes nothing;
// Undistribute brings the rows back with the (id) key.
func TestDistributeInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.OpenRaw(t, dbtest.NewCitusRawURL(t))
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE UNIQUE INDEX extra_unique ON messages ((metadata->>'entity_key'), id)"); err != nil {
		t.Fatal(err)
	}
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("a long answer ", 10)
	var keys []string
	for _, sess := range []string{"a", "b", "c", "d", "e", "f"} {
		r, err := s.Store(ctx, sess, []models.HistoryMessage{{Role: "user", Content: "q " + sess}, {Role: "assistant", Content: long + sess}}, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, r.Keys[1])
	}
	check := func(when string) {
		t.Helper()
		for i, sess := range []string{"a", "b", "c", "d", "e", "f"} {
			h, err := s.Load(ctx, sess, sessionstore.LoadOptions{})
			if err != nil || len(h) != 2 || h[0].Content != "q "+sess {
				t.Fatalf("%s: load %s = %v, %v", when, sess, h, err)
			}
			if got, err := s.Lookup(ctx, keys[i]); err != nil || got != long+sess {
				t.Fatalf("%s: lookup %s = %q, %v", when, keys[i], got, err)
			}
		}
	}

	steps, err := citus.Distribute(ctx, db, citus.DistributeOptions{ShardCount: dbtest.CitusTestShards})
	if err != nil {
		t.Fatalf("distribute: %v (after %v)", err, steps)
	}
	t.Logf("steps: %q", steps)
	st, err := citus.Status(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Distributed || st.Tables[1].Column != "session_id" || st.Tables[0].Column != "id" || st.Tables[0].Shards != dbtest.CitusTestShards {
		t.Fatalf("after distribute: %+v", st)
	}
	if !reflect.DeepEqual(st.Tables[1].PrimaryKey, []string{"session_id", "id"}) {
		t.Errorf("messages primary key = %v", st.Tables[1].PrimaryKey)
	}
	var def string
	if err := db.NewRaw("SELECT indexdef FROM pg_indexes WHERE indexname = 'extra_unique' AND schemaname = current_schema()").Scan(ctx, &def); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(def, `(session_id, ((metadata ->> 'entity_key'::text)), id)`) {
		t.Errorf("unique index not widened: %s", def)
	}
	// The rows moved into the shards, which live on both workers.
	var inShards, nodes int
	if err := db.NewRaw(`SELECT sum(result::int) FROM run_command_on_shards('messages', 'SELECT count(*) FROM %s')`).Scan(ctx, &inShards); err != nil {
		t.Fatal(err)
	}
	if err := db.NewRaw(`SELECT count(DISTINCT nodeport) FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid)
		WHERE s.logicalrelid = 'messages'::regclass`).Scan(ctx, &nodes); err != nil {
		t.Fatal(err)
	}
	if inShards != 12 || nodes < 2 {
		t.Errorf("after distribute: %d rows in the shards (want 12), on %d nodes (want 2)", inShards, nodes)
	}
	check("distributed")

	if again, err := citus.Distribute(ctx, db, citus.DistributeOptions{}); err != nil || len(again) != 0 {
		t.Errorf("second distribute: steps %v, err %v; want none", again, err)
	}
	if _, err := s.Store(ctx, "g", []models.HistoryMessage{{Role: "user", Content: "after"}}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}

	steps, err = citus.Undistribute(ctx, db)
	if err != nil {
		t.Fatalf("undistribute: %v (after %v)", err, steps)
	}
	st, _ = citus.Status(ctx, db)
	if st.Distributed || st.Tables[0].Type != "local" || st.Tables[1].Type != "local" || st.Function {
		t.Fatalf("after undistribute: %+v", st)
	}
	if !reflect.DeepEqual(st.Tables[1].PrimaryKey, []string{"id"}) {
		t.Errorf("messages primary key after undistribute = %v", st.Tables[1].PrimaryKey)
	}
	check("undistributed")
	if h, err := s.Load(ctx, "g", sessionstore.LoadOptions{}); err != nil || len(h) != 1 {
		t.Fatalf("session stored while distributed: %v, %v", h, err)
	}
}

// Distribute refuses, naming why, where there is no Citus.
func TestDistributeRefusesWithoutCitus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pg := dbtest.NewPostgres(t)
	if _, err := citus.Distribute(ctx, pg, citus.DistributeOptions{}); !errors.Is(err, citus.ErrNoCitus) {
		t.Errorf("PostgreSQL without citus: %v", err)
	}
	if st, err := citus.Status(ctx, pg); err != nil || st.Version != "" || st.Tables[1].Type != "local" {
		t.Errorf("status without citus: %+v, %v", st, err)
	}
	lite := dbtest.NewSQLite(t)
	if _, err := citus.Distribute(ctx, lite, citus.DistributeOptions{}); err == nil || !strings.Contains(err.Error(), "SQLite") {
		t.Errorf("SQLite: %v", err)
	}
	raw := dbtest.OpenRaw(t, dbtest.NewCitusRawURL(t))
	if _, err := citus.Distribute(ctx, raw, citus.DistributeOptions{}); !errors.Is(err, repository.ErrNotMigrated) {
		t.Errorf("unmigrated: %v", err)
	}
	// A table of the peer's full schema that references messages(id), as
	// its feedback table does: refused before anything changes, naming it.
	if err := migrations.Up(ctx, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, "CREATE TABLE feedback (id uuid PRIMARY KEY, message_id uuid REFERENCES messages(id))"); err != nil {
		t.Fatal(err)
	}
	_, err := citus.Distribute(ctx, raw, citus.DistributeOptions{})
	if err == nil || !strings.Contains(err.Error(), "feedback.feedback_message_id_fkey -> messages") {
		t.Errorf("foreign key from a local table: %v", err)
	}
	if st, _ := citus.Status(ctx, raw); st.Tables[1].Type != "local" || len(st.Tables[1].PrimaryKey) != 1 {
		t.Errorf("a refused distribute changed the tables: %+v", st)
	}
}

package sessionstore

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
)

// The triggers on other writers' rows, which count them (migration 14) and
// order them (migration 17), take the session's lock by computing lockKey in
// SQL: each must agree with it, or a store and another writer's insert would
// not wait for each other.
func TestLockKeyInSQLAgrees(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	for _, file := range []string{"20260101000014_foreign_rows.up.sql", "20260101000017_foreign_order.up.sql"} {
		// The expression as the migration writes it, NEW.session_id a parameter.
		b, err := os.ReadFile("../repository/migrations/sql/postgres/" + file)
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?s)pg_advisory_xact_lock\((.*?)\);`).FindSubmatch(b)
		if m == nil {
			t.Fatalf("no pg_advisory_xact_lock in %s", file)
		}
		expr := strings.ReplaceAll(string(m[1]), "NEW.session_id", "?::uuid")
		for _, s := range []string{"00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
			"52201df2-8d00-59ec-8da2-59ec0060ce05", "80000000-0000-0000-0000-000000000001", uuid.NewString(), uuid.NewString()} {
			id := uuid.MustParse(s)
			var got int64
			if err := db.NewRaw("SELECT "+expr, s, s).Scan(context.Background(), &got); err != nil {
				t.Fatal(err)
			}
			if got != lockKey(id) {
				t.Errorf("%s, %s: SQL %d, Go %d", file, s, got, lockKey(id))
			}
		}
	}
}

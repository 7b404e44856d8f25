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

// The trigger that counts other writers' rows (migration 14) takes the
// session's lock by computing lockKey in SQL: the two must agree, or a store
// and another writer's insert would not wait for each other.
func TestLockKeyInSQLAgrees(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	// The expression as the migration writes it, NEW.session_id a parameter.
	b, err := os.ReadFile("../repository/migrations/sql/postgres/20260101000014_foreign_rows.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)pg_advisory_xact_lock\((.*?)\);`).FindSubmatch(b)
	if m == nil {
		t.Fatal("no pg_advisory_xact_lock in migration 14")
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
			t.Errorf("%s: SQL %d, Go %d", s, got, lockKey(id))
		}
	}
}

package sessionstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Behind PgBouncer in transaction mode, each transaction may run on another
// server connection, where a statement prepared by name does not exist.
// With the documented default_query_exec_mode, 64 clients storing, loading
// and looking up at once (the pooler's 8 server connections per database
// shuffled between them) see no error and every result is right.
func TestPgBouncerTransactionModeUnderLoad(t *testing.T) {
	t.Parallel()
	u := dbtest.NewPgBouncerURL(t)
	db, err := repository.Open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.NamedStatements() {
		t.Fatalf("%s: named statements behind a transaction-mode pooler", u)
	}
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	stores, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	var wg sync.WaitGroup
	for c := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, _ := stores.For(fmt.Sprintf("user-%d", c%8))
			key := fmt.Sprintf("chat-%d", c)
			for i := range 10 {
				long := strings.Repeat(fmt.Sprintf("answer %d.%d ", c, i), 10)
				res, err := s.Store(ctx, key, []models.HistoryMessage{{Role: models.RoleUser, Content: "q"}, {Role: models.RoleAssistant, Content: long}}, sessionstore.StoreOptions{})
				if err != nil {
					failed.Add(1)
					t.Errorf("client %d store %d: %v", c, i, err)
					return
				}
				h, err := s.Load(ctx, key, sessionstore.LoadOptions{})
				if err != nil || len(h) != 2*(i+1) {
					failed.Add(1)
					t.Errorf("client %d load %d: %d messages, %v", c, i, len(h), err)
					return
				}
				full, err := s.Lookup(ctx, res.Keys[1])
				if err != nil || full != long {
					failed.Add(1)
					t.Errorf("client %d lookup %d: %v", c, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d clients failed through PgBouncer", failed.Load())
	}
}

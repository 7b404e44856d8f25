package sessionstore_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Searches beside writers never fail (a search on PostgreSQL answered 503
// 49 times in 50 beside 4 writers: its catch-up lost the indexer's lock
// race and its transaction could not commit, or re-indexed rows another
// indexer had committed). Writers of two tenants, searchers of both and
// serve's background indexer run at once on every database; no search and
// no indexer run may fail, and when the writers stop every batch's word is
// found by its own tenant and by no other.
func TestSearchBesideWriters(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, db := b.open(t, nil)
			const writers, batches, searchers = 4, 6, 4
			stop := make(chan struct{})
			var wg, bg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			fail := func(err error) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			tenant := func(i int) string { return []string{"alice", "bob"}[i%2] }
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					s := mk(tenant(w))
					for i := range batches {
						msgs := make([]models.HistoryMessage, 20)
						for j := range msgs {
							msgs[j] = msg("user", fmt.Sprintf("note %d of batch w%dx%dz", j, w, i))
						}
						if _, err := s.Store(ctx, fmt.Sprintf("s%d", w), msgs, sessionstore.StoreOptions{}); err != nil {
							fail(fmt.Errorf("writer %d: %w", w, err))
							return
						}
					}
				}()
			}
			for q := range searchers {
				bg.Add(1)
				go func() {
					defer bg.Done()
					s := mk(tenant(q))
					for n := 0; n < 200; n++ {
						select {
						case <-stop:
							return
						default:
						}
						o := sessionstore.SearchOptions{Query: "note"}
						if q%2 == 1 { // serve's way: the catch-up first, then the search
							if _, err := s.CatchUpSearch(ctx, &o); err != nil {
								fail(fmt.Errorf("searcher %d catch-up: %w", q, err))
								return
							}
						}
						if _, err := s.SearchPage(ctx, o); err != nil {
							fail(fmt.Errorf("searcher %d: %w", q, err))
							return
						}
					}
				}()
			}
			bg.Add(1)
			go func() { // serve's background indexer
				defer bg.Done()
				for n := 0; n < 2000; n++ {
					select {
					case <-stop:
						return
					case <-time.After(5 * time.Millisecond):
					}
					if _, err := sessionstore.IndexSearch(ctx, db, 0); err != nil {
						fail(fmt.Errorf("indexer: %w", err))
						return
					}
				}
			}()
			wg.Wait()
			close(stop)
			bg.Wait()
			for _, err := range errs {
				t.Error(err)
			}
			for w := range writers {
				for i := range batches {
					word := fmt.Sprintf("w%dx%dz", w, i)
					for _, user := range []string{"alice", "bob"} {
						r, err := mk(user).SearchPage(ctx, sessionstore.SearchOptions{Query: word, Limit: 50})
						want := 0
						if user == tenant(w) {
							want = 20
						}
						if err != nil || len(r.Hits) != want || r.Indexing {
							t.Errorf("%s searching %q after the writers: %d hits (want %d), indexing %v, %v", user, word, len(r.Hits), want, r.Indexing, err)
						}
					}
				}
			}
		})
	}
}

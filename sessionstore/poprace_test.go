package sessionstore_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Pops racing each other and stores, in two tenants' sessions of one name:
// each pop removes one message no other pop removed, nothing else is lost,
// and one tenant's pops never reach the other's messages.
func TestPopsRacingStoresAndEachOther(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, _ := b.open(t, nil)
			const key = "popped"
			users := []string{"A", "B"}
			var mu sync.Mutex
			stored := map[string]map[string]bool{}
			var popped = map[string][]string{}
			var wg sync.WaitGroup
			for _, u := range users {
				s := mk(u)
				stored[u] = map[string]bool{}
				for i := range 20 {
					c := fmt.Sprintf("%s first %d", u, i)
					store(t, s, key, msg("user", c))
					stored[u][c] = true
				}
				for w := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := range 20 {
							c := fmt.Sprintf("%s writer %d %d", u, w, i)
							if _, err := s.Store(ctx, key, []models.HistoryMessage{msg("assistant", c)}, sessionstore.StoreOptions{}); err != nil {
								t.Error(err)
								return
							}
							mu.Lock()
							stored[u][c] = true
							mu.Unlock()
						}
					}()
				}
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for range 12 {
							m, ok, err := s.PopMessage(ctx, key)
							if err != nil {
								t.Error(err)
								return
							}
							if ok {
								mu.Lock()
								popped[u] = append(popped[u], m.Content)
								mu.Unlock()
							}
						}
					}()
				}
			}
			wg.Wait()
			for _, u := range users {
				h, err := mk(u).Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]int{}
				for _, c := range popped[u] {
					seen[c]++
				}
				for _, m := range h {
					seen[m.Content]++
				}
				for c, n := range seen {
					if n != 1 || !stored[u][c] {
						t.Errorf("%s: %q popped or loaded %d times (stored by %s: %v)", u, c, n, u, stored[u][c])
					}
				}
				if len(seen) != len(stored[u]) {
					t.Errorf("%s: %d messages popped or loaded of %d stored", u, len(seen), len(stored[u]))
				}
			}
		})
	}
}

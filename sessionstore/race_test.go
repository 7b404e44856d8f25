package sessionstore_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 26: two concurrent stores with one caller id into different
// sessions, or two forks onto one new id: the loser got a raw unique
// violation (503 through serve) where the same calls one after the other
// answer "already used" / "already exists" (400). Now the concurrent calls
// answer as the sequential ones do.
func TestConcurrentCallsAnswerAsSequentialOnes(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		const rounds, writers = 10, 8
		for round := range rounds {
			id := uuid.NewString()
			var wg sync.WaitGroup
			errs := make([]error, writers)
			stored := make([]int, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m := models.HistoryMessage{Role: "user", Content: "same id", ID: id}
					res, err := s.Store(ctx, fmt.Sprintf("race-%d-%d", round, w), []models.HistoryMessage{m}, sessionstore.StoreOptions{})
					errs[w], stored[w] = err, len(res.Keys)-res.Existing
				}()
			}
			wg.Wait()
			won := 0
			for w, err := range errs {
				if err == nil {
					won += stored[w]
					continue
				}
				if fe, ok := models.AsFieldError(err); !ok || fe.Field != "id" {
					t.Fatalf("round %d writer %d: %v; want the id's field error", round, w, err)
				}
			}
			// On Citus too (the store function's lock per caller id, issue
			// 42): before it, several won there.
			if won != 1 {
				t.Fatalf("round %d: the id was stored %d times", round, won)
			}

			// Forks onto one new id: one fork, the rest "already exists".
			store(t, s, fmt.Sprintf("src-%d", round), msg("user", "q"))
			target := fmt.Sprintf("fork-target-%d", round)
			ferrs := make([]error, writers)
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, ferrs[w] = s.Fork(ctx, fmt.Sprintf("src-%d", round), sessionstore.ForkOptions{NewSessionKey: target})
				}()
			}
			wg.Wait()
			forked := 0
			for w, err := range ferrs {
				if err == nil {
					forked++
					continue
				}
				if fe, ok := models.AsFieldError(err); !ok || fe.Field != "new_session_id" {
					t.Fatalf("round %d fork %d: %v; want new_session_id's field error", round, w, err)
				}
			}
			if forked != 1 {
				t.Fatalf("round %d: %d forks onto one id", round, forked)
			}
		}
	})
}

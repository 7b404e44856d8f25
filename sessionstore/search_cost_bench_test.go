package sessionstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// BenchmarkStoreSearchCost is what search by default costs a store on
// PostgreSQL: the same turns stored into two schemas of one server, one as
// migrated (each write notes its messages for the search indexer) and one
// with the search triggers dropped, alternating call by call so that drift
// falls on both. It reports each side's mean and their ratio ("x-noted").
// The indexer runs off the write path (serve's background loop) and is not
// timed here.
func BenchmarkStoreSearchCost(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{4, 100} {
		b.Run(fmt.Sprintf("store_%d_messages", n), func(b *testing.B) {
			noted, plain := dbtest.NewPostgres(b), dbtest.NewPostgres(b)
			for _, tr := range []string{"remstore_search_insert", "remstore_search_delete", "remstore_search_update"} {
				if _, err := plain.ExecContext(ctx, "DROP TRIGGER "+tr+" ON messages"); err != nil {
					b.Fatal(err)
				}
			}
			stores := make([]*sessionstore.Store, 2)
			for i := range stores {
				s, err := sessionstore.New([]*repository.DB{noted, plain}[i], sessionstore.Options{UserID: "bench"})
				if err != nil {
					b.Fatal(err)
				}
				stores[i] = s
			}
			turn := make([]models.HistoryMessage, n)
			for i := range turn {
				role := models.RoleUser
				if i%2 == 1 {
					role = models.RoleAssistant
				}
				turn[i] = models.HistoryMessage{Role: role, Content: strings.Repeat(fmt.Sprintf("word%d lisbon trip ", i), 40)}
			}
			var took [2]time.Duration
			k := 0
			for b.Loop() {
				for j := range 2 {
					i := (k + j) % 2 // which goes first alternates
					start := time.Now()
					if _, err := stores[i].Store(ctx, fmt.Sprintf("s%d", k%50), turn, sessionstore.StoreOptions{}); err != nil {
						b.Fatal(err)
					}
					took[i] += time.Since(start)
				}
				k++
			}
			b.ReportMetric(float64(took[0].Microseconds())/float64(k), "noted-µs/store")
			b.ReportMetric(float64(took[1].Microseconds())/float64(k), "plain-µs/store")
			b.ReportMetric(float64(took[0])/float64(took[1]), "x-noted")
		})
	}
}

package sessionstore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// BenchmarkStoreLimitsCost is what the per-user limits cost a store on
// PostgreSQL: the same turns stored by a tenant without limits and by one
// with limits it never meets, alternating call by call in one schema so
// that drift falls on both; into one of 50 sessions (the hot path: the
// session's row locked and its kept count read), and into a new session
// each time (the tenant's lock taken and its sessions counted; the limit
// is 1,000 sessions, so run it for fewer calls). It reports each side's
// mean and their ratio ("x-limited").
func BenchmarkStoreLimitsCost(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		key  func(k int) string
	}{
		{"into_a_session", func(k int) string { return fmt.Sprintf("s%d", k%50) }},
		{"new_session", func(k int) string { return fmt.Sprintf("n%d", k) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			// Commits unflushed: a store's fsync, which a busy machine
			// makes vary by milliseconds, would hide what is measured.
			db := dbtest.OpenRaw(b, dbtest.NewPostgresURL(b)+"&synchronous_commit=off")
			if err := migrations.Up(ctx, db); err != nil {
				b.Fatal(err)
			}
			stores := make([]*sessionstore.Store, 2)
			for i, l := range []sessionstore.Limits{{}, {SessionMessages: 1 << 30, Sessions: 1000}} {
				s, err := sessionstore.New(db, sessionstore.Options{UserID: fmt.Sprintf("bench-%d", i), Limits: l})
				if err != nil {
					b.Fatal(err)
				}
				stores[i] = s
			}
			turn := make([]models.HistoryMessage, 4)
			for i := range turn {
				turn[i] = models.HistoryMessage{Role: []models.Role{models.RoleUser, models.RoleAssistant}[i%2], Content: strings.Repeat(fmt.Sprintf("word%d lisbon trip ", i), 40)}
			}
			var took [2]time.Duration
			k := 0
			for b.Loop() {
				for j := range 2 {
					i := (k + j) % 2 // which goes first alternates
					start := time.Now()
					if _, err := stores[i].Store(ctx, c.key(k), turn, sessionstore.StoreOptions{}); err != nil {
						b.Fatal(err)
					}
					took[i] += time.Since(start)
				}
				k++
			}
			b.ReportMetric(float64(took[0].Microseconds())/float64(k), "off-µs/store")
			b.ReportMetric(float64(took[1].Microseconds())/float64(k), "limited-µs/store")
			b.ReportMetric(float64(took[1])/float64(took[0]), "x-limited")
		})
	}
}

package sessionstore_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Streaming a session of 20k messages peaks at no more than twice the heap of
// streaming 2k: memory flat in the number of messages.
func TestLoadEachMemoryFlat(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	s := newStore(t, db, "A", 200)
	ctx := context.Background()
	batch := make([]models.HistoryMessage, 1000)
	for i := range batch {
		batch[i] = msg("assistant", fmt.Sprintf("%d %s", i, strings.Repeat("long answer text ", 40)))
	}
	peak := func(key string, n int) uint64 {
		for range n / 1000 {
			if _, err := s.StoreMessages(ctx, key, batch, ""); err != nil {
				t.Fatal(err)
			}
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, top, seen := ms.HeapAlloc, ms.HeapAlloc, 0
		err := s.LoadEach(ctx, key, sessionstore.LoadOptions{}, func(models.HistoryMessage) error {
			if seen++; seen%250 == 0 {
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapAlloc)
			}
			return nil
		})
		if err != nil || seen != n {
			t.Fatalf("streamed %d of %d: %v", seen, n, err)
		}
		return top - min(base, top)
	}
	n := 2000
	if os.Getenv("REMSTORE_STREAM_BIG") == "1" { // the target's sizes: 10k and 100k
		n = 10_000
	}
	small, large := peak("small", n), peak("large", 10*n)
	t.Logf("peak heap above baseline: %d messages %d KiB, %d messages %d KiB (%.2fx)", n, small>>10, 10*n, large>>10, float64(large)/float64(max(small, 1)))
	if large > 2*small+(1<<20) {
		t.Fatalf("20k messages peaked at %d bytes, 2k at %d: memory grows with the session", large, small)
	}
}

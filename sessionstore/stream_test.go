package sessionstore_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Streaming a session of 20k messages peaks at no more than twice the heap of
// streaming 2k: memory flat in the number of messages, as history dicts and
// as pydantic-ai messages (assistant answers each followed by a tool result,
// so the converter groups every pair).
func TestLoadEachMemoryFlat(t *testing.T) {
	// Not parallel, and its two measurements one after the other: the heap is
	// the process's, so a test running beside it would be measured too.
	for _, pydantic := range []bool{false, true} {
		t.Run(map[bool]string{false: "dicts", true: "pydantic-ai"}[pydantic], func(t *testing.T) {
			memoryFlat(t, pydantic)
		})
	}
}

func memoryFlat(t *testing.T, pydantic bool) {
	db := dbtest.NewPostgres(t)
	s := newStore(t, db, "A", 200)
	ctx := context.Background()
	batch := make([]models.HistoryMessage, 1000)
	for i := range batch {
		batch[i] = msg("assistant", fmt.Sprintf("%d %s", i, strings.Repeat("long answer text ", 40)))
		if i%2 == 1 {
			batch[i] = models.HistoryMessage{Role: "tool", Content: `{"ok":true}`, ToolCallID: fmt.Sprint("c", i), ToolName: "f"}
		}
	}
	fill := func(key string, n int) {
		for range n / 1000 {
			if _, err := s.Store(ctx, key, batch, sessionstore.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	peak := func(key string, n int) uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base, top, seen := ms.HeapAlloc, ms.HeapAlloc, 0
		sample := func(models.HistoryMessage) error {
			if seen++; seen%250 == 0 {
				runtime.ReadMemStats(&ms)
				top = max(top, ms.HeapAlloc)
			}
			return nil
		}
		var err error
		if pydantic {
			_, err = convert.WriteStream(io.Discard, convert.Options{SystemPrompt: "s"}, func(fn func(models.HistoryMessage) error) error {
				return s.LoadEach(ctx, key, sessionstore.LoadOptions{}, func(m models.HistoryMessage) error {
					if err := sample(m); err != nil {
						return err
					}
					return fn(m)
				})
			})
		} else {
			err = s.LoadEach(ctx, key, sessionstore.LoadOptions{}, sample)
		}
		if err != nil || seen != n {
			t.Fatalf("streamed %d of %d: %v", seen, n, err)
		}
		return top - min(base, top)
	}
	n := 2000
	if os.Getenv("REMSTORE_STREAM_BIG") == "1" { // the target's sizes: 10k and 100k
		n = 10_000
	}
	fill("small", n)
	fill("large", 10*n)
	// The least of three loads each: a collection that happens to run late
	// in one load (other packages' tests share the machine) is noise, not
	// what the load keeps.
	small, large := peak("small", n), peak("large", 10*n)
	for range 2 {
		small, large = min(small, peak("small", n)), min(large, peak("large", 10*n))
	}
	t.Logf("pydantic-ai %v: peak heap above baseline: %d messages %d KiB, %d messages %d KiB (%.2fx)", pydantic, n, small>>10, 10*n, large>>10, float64(large)/float64(max(small, 1)))
	// Loose enough for a machine busy with other packages' tests (the GC
	// runs late there), tight enough for a load that collects: 10x.
	if large > 3*small+(2<<20) {
		t.Fatalf("20k messages peaked at %d bytes, 2k at %d: memory grows with the session", large, small)
	}
}

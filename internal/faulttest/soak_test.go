package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// 16 writers and 16 readers on 100 sessions for REMSTORE_SOAK (default 5s;
// `make soak` runs 60s): zero errors, every session's indexes gap-free, every
// key resolves to its text.
func TestSoak(t *testing.T) {
	t.Parallel()
	d := 5 * time.Second
	if v, err := time.ParseDuration(os.Getenv("REMSTORE_SOAK")); err == nil {
		d = v
	}
	db := dbtest.NewPostgres(t)
	db.SetMaxOpenConns(40)
	st, err := sessionstore.New(db, sessionstore.Options{UserID: "soak", TruncateLength: 20})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var writes, reads, lookups, errs atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		if ctx.Err() == nil {
			errs.Add(1)
			firstErr.CompareAndSwap(nil, err)
		}
	}
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for n := 0; ctx.Err() == nil; n++ {
				var msgs []models.HistoryMessage
				for i := range 1 + rng.IntN(4) {
					msgs = append(msgs, models.HistoryMessage{Role: "assistant",
						Content: fmt.Sprintf("w%d-%d-%d %s", w, n, i, strings.Repeat("x", rng.IntN(80)))})
				}
				if _, err := st.Store(ctx, fmt.Sprintf("soak-%d", rng.IntN(100)), msgs, sessionstore.StoreOptions{}); err != nil {
					fail(err)
					continue
				}
				writes.Add(1)
			}
		}()
	}
	for r := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			for ctx.Err() == nil {
				h, err := st.Load(ctx, fmt.Sprintf("soak-%d", rng.IntN(100)), sessionstore.LoadOptions{})
				if err != nil {
					fail(err)
					continue
				}
				reads.Add(1)
				for _, m := range h {
					if m.Compressed && rng.IntN(4) == 0 {
						full, err := st.Lookup(ctx, m.EntityKey)
						if err != nil || !strings.HasPrefix(full, m.Content[:10]) {
							fail(fmt.Errorf("lookup %s: %q %v", m.EntityKey, full, err))
						}
						lookups.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if n := errs.Load(); n > 0 {
		t.Fatalf("%d errors, the first: %v", n, firstErr.Load())
	}
	// every session gap-free, every key resolving
	bg := context.Background()
	total := 0
	for s := range 100 {
		key := fmt.Sprintf("soak-%d", s)
		sid, _ := st.SessionUUID(key)
		var idx []int
		if err := db.NewRaw("SELECT (metadata->>'message_index')::int FROM messages WHERE session_id = ? ORDER BY created_at, id", sid).Scan(bg, &idx); err != nil {
			t.Fatal(err)
		}
		for i, n := range idx {
			if n != i {
				t.Fatalf("%s: index %d at position %d", key, n, i)
			}
		}
		full, _ := st.Load(bg, key, sessionstore.LoadOptions{NoCompress: true})
		comp, _ := st.Load(bg, key, sessionstore.LoadOptions{})
		for i, m := range comp {
			if m.Compressed {
				if got, err := st.Lookup(bg, m.EntityKey); err != nil || got != full[i].Content {
					t.Fatalf("%s: key %s does not resolve: %v", key, m.EntityKey, err)
				}
			}
		}
		total += len(idx)
	}
	t.Logf("%s: %d store calls (%d messages), %d loads, %d lookups, 0 errors", d, writes.Load(), total, reads.Load(), lookups.Load())
	if writes.Load() == 0 || reads.Load() == 0 {
		t.Fatal("the soak did no work")
	}
}

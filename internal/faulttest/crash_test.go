package faulttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Stop the server with -m immediate in the middle of a stream of batch
// stores, restart it, and check that every batch the client saw acknowledged
// is there in full and no batch is there in part. REMSTORE_FAULT_ROUNDS sets
// the rounds (default 200).
func TestCrashKeepsAcknowledgedBatches(t *testing.T) {
	rounds := 200
	if v, err := strconv.Atoi(os.Getenv("REMSTORE_FAULT_ROUNDS")); err == nil {
		rounds = v
	}
	c := New(t)
	ctx := context.Background()
	db, err := repository.Open(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	rng := rand.New(rand.NewPCG(7, 11))
	acked, inflightKilled := 0, 0
	for round := range rounds {
		db, err := repository.Open(ctx, c.URL())
		if err != nil {
			t.Fatalf("round %d: reopen after restart: %v", round, err)
		}
		st, _ := sessionstore.New(db, sessionstore.Options{UserID: "A"})
		key := fmt.Sprintf("crash-%d", round)
		var mu sync.Mutex
		sizes := map[int]int{} // batch -> size, for acknowledged batches
		done := make(chan struct{})
		wrng := rand.New(rand.NewPCG(uint64(round), 3)) // the writer's own: rand.Rand is not safe to share
		go func() {
			defer close(done)
			for b := 0; ; b++ {
				size := 1 + wrng.IntN(6)
				var msgs []models.HistoryMessage
				for i := range size {
					msgs = append(msgs, models.HistoryMessage{Role: "user", Content: fmt.Sprintf("r%d-b%d-%d/%d", round, b, i, size)})
				}
				if _, err := st.Store(ctx, key, msgs, sessionstore.StoreOptions{}); err != nil {
					return // the server is gone: this batch was not acknowledged
				}
				mu.Lock()
				sizes[b] = size
				mu.Unlock()
			}
		}()
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond)
		if err := c.Crash(); err != nil {
			t.Fatalf("round %d: crash: %v", round, err)
		}
		<-done
		_ = db.Close()
		if err := c.Start(); err != nil {
			t.Fatalf("round %d: restart: %v", round, err)
		}
		db, err = repository.Open(ctx, c.URL())
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		st, _ = sessionstore.New(db, sessionstore.Options{UserID: "A"})
		h, err := st.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
		_ = db.Close()
		if err != nil {
			t.Fatalf("round %d: load after recovery: %v", round, err)
		}
		seen, want := map[int]int{}, map[int]int{} // batch -> messages found, batch size
		for i, m := range h {
			var r, b, k, size int
			if _, err := fmt.Sscanf(m.Content, "r%d-b%d-%d/%d", &r, &b, &k, &size); err != nil || r != round {
				t.Fatalf("round %d: unexpected message %q", round, m.Content)
			}
			seen[b]++
			want[b] = size
			if k > 0 && h[i-1].Content != fmt.Sprintf("r%d-b%d-%d/%d", round, b, k-1, size) {
				t.Fatalf("round %d: batch %d interleaved", round, b)
			}
		}
		for b, size := range sizes {
			if seen[b] != size {
				t.Fatalf("round %d: acknowledged batch %d has %d of %d messages", round, b, seen[b], size)
			}
		}
		for b, n := range seen {
			if n != want[b] {
				t.Fatalf("round %d: batch %d is there in part (%d of %d)", round, b, n, want[b])
			}
			if _, ok := sizes[b]; !ok {
				inflightKilled++ // committed, but the acknowledgement was lost with the server
			}
		}
		acked += len(sizes)
	}
	t.Logf("%d rounds: %d acknowledged batches all intact; %d batches committed whose acknowledgement died with the server; no partial batch", rounds, acked, inflightKilled)
	if acked == 0 {
		t.Fatal("no batch was acknowledged: the test proved nothing")
	}
}

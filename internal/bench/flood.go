package bench

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// FloodResult is one tenant's loads through serve, alone and while another
// tenant floods serve with searches (issue 42 M3: a tenant's search flood
// must leave the others at least 80% of their load throughput).
type FloodResult struct {
	Loaders, Flooders int
	// Polite flooders wait what a 429's Retry-After says; the others send
	// again at once.
	Polite      bool    `json:"polite"`
	QuietPerSec float64 `json:"quiet_loads_per_sec"`
	FloodPerSec float64 `json:"flood_loads_per_sec"`
	Ratio       float64 `json:"flood_over_quiet"`
	QuietP99MS  float64 `json:"quiet_p99_ms"`
	FloodP99MS  float64 `json:"flood_p99_ms"`
	Searches    int64   `json:"searches_answered"`
	Refused     int64   `json:"searches_refused_429"`
	TimedOut    int64   `json:"searches_timed_out"`
}

// SearchFlood measures loaders clients loading the 1,000-message session
// of tenant "bench" through serve, in turns of about half a second for d
// each: alone, and while flooders clients of tenant "flooder" search its
// 20,000 messages for a word in every one of them without pause: each 429
// answered by waiting its Retry-After when polite, else by trying again at
// once.
func (e *Env) SearchFlood(ctx context.Context, loaders, flooders int, d time.Duration, polite bool) (FloodResult, error) {
	r := FloodResult{Loaders: loaders, Flooders: flooders, Polite: polite}
	if h, err := e.Store.Load(ctx, "load-1000", sessionstore.LoadOptions{}); err != nil || len(h) != 1000 {
		if err := e.fill(ctx, "load-1000", 1000); err != nil {
			return r, err
		}
	}
	stores, err := sessionstore.NewStores(e.DB, sessionstore.Options{})
	if err != nil {
		return r, err
	}
	flooder, err := stores.For("flooder")
	if err != nil {
		return r, err
	}
	key := fmt.Sprintf("flood-%d", time.Now().UnixNano()%1e9)
	batch := make([]models.HistoryMessage, 1000)
	for i := range batch {
		batch[i] = models.HistoryMessage{Role: models.RoleUser, Content: fmt.Sprintf("a common word in message %d %s", i, strings.Repeat("text ", 30))}
	}
	for range 20 {
		if _, err := flooder.Store(ctx, key, batch, sessionstore.StoreOptions{}); err != nil {
			return r, err
		}
	}
	// The corpus indexed before the clock starts: the flood measures
	// searches, not the index catching up with 20,000 fresh messages
	// (which the searches of the first flooded slots did, unbudgeted).
	for {
		ir, err := sessionstore.IndexSearch(ctx, e.DB, 0)
		if err != nil {
			return r, err
		}
		if !ir.Pending {
			break
		}
		time.Sleep(10 * time.Millisecond) // another indexer holds the lock
	}
	addr, stop, err := serveAPI(stores)
	if err != nil {
		return r, err
	}
	defer stop()
	loads, floods := make([]*wireClient, loaders), make([]*wireClient, flooders)
	for c := range loads {
		loads[c] = newWireClient(addr, 30*time.Second)
		defer loads[c].close()
	}
	for c := range floods {
		floods[c] = newWireClient(addr, 30*time.Second)
		defer floods[c].close()
	}
	load := func(_ context.Context, c int) error {
		status, _, err := loads[c].do(http.MethodGet, "/v1/sessions/load-1000/messages", nil, "X-User-Id: bench")
		if err == nil && status != http.StatusOK {
			err = fmt.Errorf("load: status %d", status)
		}
		return err
	}
	var answered, refused, timedOut atomic.Int64
	// flood starts the flooders; the func it returns waits for them to end.
	flood := func(ctx context.Context) func() {
		var wg sync.WaitGroup
		for c := range floods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					status, _, err := floods[c].do(http.MethodGet, "/v1/search?q=common&limit=50", nil, "X-User-Id: flooder")
					switch {
					case status == http.StatusOK:
						answered.Add(1)
					case status == http.StatusTooManyRequests:
						refused.Add(1)
						if polite { // at most the slot's length: the next slot is quiet
							select {
							case <-ctx.Done():
							case <-time.After(floods[c].retryAfter):
							}
						}
					case status == http.StatusServiceUnavailable:
						timedOut.Add(1)
					case err != nil:
						return
					}
				}
			}()
		}
		return wg.Wait
	}
	rounds := max(3, int(d/(500*time.Millisecond)))
	slot := d / time.Duration(rounds)
	var lat [2][]time.Duration
	var took [2]time.Duration
	for round := range rounds {
		for i := range 2 {
			side := (round + i) % 2 // 0 quiet, 1 flooded
			fctx, cancel := context.WithCancel(ctx)
			wait := func() {}
			if side == 1 {
				wait = flood(fctx)
			}
			start := time.Now()
			l, err := hammer(ctx, loaders, slot, load)
			took[side] += time.Since(start)
			cancel()
			wait() // the flood's last requests end before the next slot
			if err != nil {
				return r, err
			}
			lat[side] = append(lat[side], l...)
		}
	}
	r.QuietPerSec, _, r.QuietP99MS = rate(lat[0], took[0])
	r.FloodPerSec, _, r.FloodP99MS = rate(lat[1], took[1])
	r.Ratio = r.FloodPerSec / r.QuietPerSec
	r.Searches, r.Refused, r.TimedOut = answered.Load(), refused.Load(), timedOut.Load()
	return r, nil
}

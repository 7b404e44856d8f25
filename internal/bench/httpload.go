package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/sessionstore"
)

// HTTPResult sets one operation through serve's HTTP API beside the same
// operation called on the library, with the same number of concurrent
// callers, one after the other on the same database.
type HTTPResult struct {
	Name           string  `json:"name"`
	Clients        int     `json:"clients"`
	LibraryPerSec  float64 `json:"library_ops_per_sec"`
	HTTPPerSec     float64 `json:"http_ops_per_sec"`
	Ratio          float64 `json:"http_over_library"`
	LibraryP50MS   float64 `json:"library_p50_ms"`
	HTTPP50MS      float64 `json:"http_p50_ms"`
	LibraryP99MS   float64 `json:"library_p99_ms"`
	HTTPP99MS      float64 `json:"http_p99_ms"`
	ResponseLength int     `json:"response_bytes,omitempty"`
}

// HTTP measures storing a turn and loading the 1,000-message session
// ("load-1000", as Workloads fills it) with clients concurrent callers for d each:
// through the API served as `remstore serve` serves it (its defaults, its
// connection limits, a request log written to nowhere) on a loopback
// socket, and through the library.
func (e *Env) HTTP(ctx context.Context, clients int, d time.Duration) ([]HTTPResult, error) {
	if h, err := e.Store.Load(ctx, "load-1000", sessionstore.LoadOptions{}); err != nil || len(h) != 1000 {
		if err := e.fill(ctx, "load-1000", 1000); err != nil { // run without the workloads
			return nil, err
		}
	}
	stores, err := sessionstore.NewStores(e.DB, sessionstore.Options{})
	if err != nil {
		return nil, err
	}
	api, err := httpapi.New(httpapi.Options{Stores: stores, Insecure: true, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ln = httpapi.LimitListener(ln, httpapi.DefaultMaxConns, httpapi.DefaultMaxConnsPerClient)
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: httpapi.DefaultIdleTimeout,
		WriteTimeout: httpapi.DefaultBodyTimeout + httpapi.DefaultRequestTimeout + 10*time.Second, MaxHeaderBytes: 64 << 10}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer client.CloseIdleConnections()

	turn, err := json.Marshal(Turn(0))
	if err != nil {
		return nil, err
	}
	run := "h" + fmt.Sprint(time.Now().UnixNano()%1e9)
	var size int
	var sizeMu sync.Mutex
	do := func(req *http.Request) error {
		req.Header.Set("X-User-Id", "bench")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode/100 != 2 {
			return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
		}
		sizeMu.Lock()
		size = int(n)
		sizeMu.Unlock()
		return nil
	}
	cases := []struct {
		name      string
		library   func(ctx context.Context, c int) error
		http      func(ctx context.Context, c int) error
		showBytes bool
	}{
		{name: "store a turn",
			library: func(ctx context.Context, c int) error {
				_, err := e.Store.StoreMessages(ctx, fmt.Sprintf("%s-lib-%d", run, c), Turn(0), "")
				return err
			},
			http: func(ctx context.Context, c int) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost,
					fmt.Sprintf("%s/v1/sessions/%s-api-%d/messages", base, run, c), bytes.NewReader(turn))
				req.Header.Set("Content-Type", "application/json")
				return do(req)
			}},
		{name: "load 1000", showBytes: true,
			library: func(ctx context.Context, _ int) error {
				h, err := e.Store.Load(ctx, "load-1000", sessionstore.LoadOptions{})
				if err == nil && len(h) != 1000 {
					err = fmt.Errorf("loaded %d of 1000", len(h))
				}
				return err
			},
			http: func(ctx context.Context, _ int) error {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/sessions/load-1000/messages", nil)
				return do(req)
			}},
	}
	var out []HTTPResult
	for _, c := range cases {
		r := HTTPResult{Name: c.name, Clients: clients}
		var lib, api []time.Duration
		// Alternate which side goes first, twice, so neither always meets
		// the other's leftovers (autovacuum, a warm cache).
		for round := range 2 {
			sides := []*[]time.Duration{&lib, &api}
			fns := []func(context.Context, int) error{c.library, c.http}
			if round == 1 {
				sides[0], sides[1] = sides[1], sides[0]
				fns[0], fns[1] = fns[1], fns[0]
			}
			for i := range 2 {
				lat, err := hammer(ctx, clients, d/2, fns[i])
				if err != nil {
					return out, fmt.Errorf("%s: %w", c.name, err)
				}
				*sides[i] = append(*sides[i], lat...)
			}
		}
		r.LibraryPerSec, r.LibraryP50MS, r.LibraryP99MS = rate(lib, d)
		r.HTTPPerSec, r.HTTPP50MS, r.HTTPP99MS = rate(api, d)
		r.Ratio = r.HTTPPerSec / r.LibraryPerSec
		if c.showBytes {
			r.ResponseLength = size
		}
		out = append(out, r)
	}
	return out, nil
}

// hammer runs fn from clients goroutines for d and returns every call's latency.
func hammer(ctx context.Context, clients int, d time.Duration, fn func(context.Context, int) error) ([]time.Duration, error) {
	lat := make([][]time.Duration, clients)
	errs := make([]error, clients)
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t := time.Now()
				if err := fn(ctx, c); err != nil {
					errs[c] = err
					return
				}
				lat[c] = append(lat[c], time.Since(t))
			}
		}()
	}
	wg.Wait()
	return slices.Concat(lat...), errors.Join(errs...)
}

// rate is the calls per second over total time d, the median and the p99.
func rate(lat []time.Duration, d time.Duration) (perSec, p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	slices.Sort(lat)
	return float64(len(lat)) / d.Seconds(), pct(lat, 0.5), pct(lat, 0.99)
}

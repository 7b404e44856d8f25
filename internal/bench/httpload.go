package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// HTTPResult sets one operation through serve's HTTP API beside the same
// operation called on the library and through a bare net/http handler (the
// HTTP floor: read the body, decode it, call the library, encode the
// answer; none of serve's layers), with the same number of concurrent
// callers, in turns on the same database.
type HTTPResult struct {
	Name           string  `json:"name"`
	Clients        int     `json:"clients"`
	LibraryPerSec  float64 `json:"library_ops_per_sec"`
	HTTPPerSec     float64 `json:"http_ops_per_sec"`
	BarePerSec     float64 `json:"bare_http_ops_per_sec"`
	Ratio          float64 `json:"http_over_library"`
	BareRatio      float64 `json:"bare_http_over_library"`
	ServeOverBare  float64 `json:"http_over_bare_http"`
	LibraryP50MS   float64 `json:"library_p50_ms"`
	HTTPP50MS      float64 `json:"http_p50_ms"`
	BareP50MS      float64 `json:"bare_http_p50_ms"`
	LibraryP99MS   float64 `json:"library_p99_ms"`
	HTTPP99MS      float64 `json:"http_p99_ms"`
	BareP99MS      float64 `json:"bare_http_p99_ms"`
	ResponseLength int     `json:"response_bytes,omitempty"`
}

// HTTP measures storing a turn and loading the 1,000-message session
// ("load-1000", as Workloads fills it) with clients concurrent callers for d
// each: through the API served as `remstore serve` serves it (its defaults,
// its connection limits, a request log written to nowhere) on a loopback
// socket, through a bare net/http handler on another, and through the
// library. The clients are wireClients, one connection each.
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
	serveAddr, stopServe, err := serveAPI(stores)
	if err != nil {
		return nil, err
	}
	defer stopServe()
	bareAddr, stopBare, err := listen(bareHandler(stores), false)
	if err != nil {
		return nil, err
	}
	defer stopBare()
	serveConns, bareConns := make([]*wireClient, clients), make([]*wireClient, clients)
	for c := range clients {
		serveConns[c], bareConns[c] = newWireClient(serveAddr, 30*time.Second), newWireClient(bareAddr, 30*time.Second)
		defer serveConns[c].close()
		defer bareConns[c].close()
	}

	turn, err := json.Marshal(Turn(0))
	if err != nil {
		return nil, err
	}
	run := "h" + fmt.Sprint(time.Now().UnixNano()%1e9)
	var size atomic.Int64
	post := func(conns []*wireClient, side string) func(context.Context, int) error {
		return func(_ context.Context, c int) error {
			_, _, err := conns[c].do(http.MethodPost, fmt.Sprintf("/v1/sessions/%s-%s-%d/messages", run, side, c), turn,
				"X-User-Id: bench", "Content-Type: application/json")
			return err
		}
	}
	get := func(conns []*wireClient) func(context.Context, int) error {
		return func(_ context.Context, c int) error {
			_, n, err := conns[c].do(http.MethodGet, "/v1/sessions/load-1000/messages", nil, "X-User-Id: bench")
			size.Store(int64(n))
			return err
		}
	}
	cases := []struct {
		name      string
		sides     [3]func(ctx context.Context, c int) error // library, bare HTTP, serve
		showBytes bool
	}{
		{name: "store a turn", sides: [3]func(context.Context, int) error{
			func(ctx context.Context, c int) error {
				_, err := e.Store.Store(ctx, fmt.Sprintf("%s-lib-%d", run, c), Turn(0), sessionstore.StoreOptions{})
				return err
			},
			post(bareConns, "bare"), post(serveConns, "api")}},
		{name: "load 1000", showBytes: true, sides: [3]func(context.Context, int) error{
			func(ctx context.Context, _ int) error {
				h, err := e.Store.Load(ctx, "load-1000", sessionstore.LoadOptions{})
				if err == nil && len(h) != 1000 {
					err = fmt.Errorf("loaded %d of 1000", len(h))
				}
				return err
			},
			get(bareConns), get(serveConns)}},
	}
	// The sides take turns in slots of about half a second, the order
	// rotating each round, so a checkpoint, an autovacuum or a slow fsync
	// spell falls on all three alike: with one slot per side, the library's
	// figure alone moved by 30% from run to run on the benchmark machine.
	rounds := max(3, int(d/(500*time.Millisecond)))
	slot := d / time.Duration(rounds)
	var out []HTTPResult
	for _, c := range cases {
		var lat [3][]time.Duration
		var took [3]time.Duration
		for round := range rounds {
			for i := range 3 {
				side := (round + i) % 3
				start := time.Now()
				l, err := hammer(ctx, clients, slot, c.sides[side])
				if err != nil {
					return out, fmt.Errorf("%s: %w", c.name, err)
				}
				took[side] += time.Since(start)
				lat[side] = append(lat[side], l...)
			}
		}
		r := HTTPResult{Name: c.name, Clients: clients}
		r.LibraryPerSec, r.LibraryP50MS, r.LibraryP99MS = rate(lat[0], took[0])
		r.BarePerSec, r.BareP50MS, r.BareP99MS = rate(lat[1], took[1])
		r.HTTPPerSec, r.HTTPP50MS, r.HTTPP99MS = rate(lat[2], took[2])
		r.Ratio, r.BareRatio, r.ServeOverBare = r.HTTPPerSec/r.LibraryPerSec, r.BarePerSec/r.LibraryPerSec, r.HTTPPerSec/r.BarePerSec
		if c.showBytes {
			r.ResponseLength = int(size.Load())
		}
		out = append(out, r)
	}
	return out, nil
}

// serveAPI serves the API on stores as `remstore serve` serves it (its
// defaults, its connection limits, a request log written to nowhere) on a
// loopback port, until stop.
func serveAPI(stores *sessionstore.Stores) (addr string, stop func(), err error) {
	api, err := httpapi.New(httpapi.Options{Stores: stores, Insecure: true, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		return "", nil, err
	}
	return listen(api, true)
}

// listen serves h on a loopback port with serve's server settings (and its
// connection limits when limited) until stop.
func listen(h http.Handler, limited bool) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := httpapi.HTTPServer(h, httpapi.DefaultIdleTimeout, httpapi.DefaultBodyTimeout, httpapi.DefaultRequestTimeout)
	if limited { // as serve runs it
		l := httpapi.LimitListener(ln, httpapi.DefaultMaxConns, httpapi.DefaultMaxConnsPerClient)
		l.Attach(srv)
		ln = l
	}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// bareHandler is the HTTP floor: the two routes with nothing but what an
// answer needs (no ids, metrics, log, limits, host checks or auth beyond
// taking X-User-Id).
func bareHandler(stores *sessionstore.Stores) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st, err := stores.For(r.Header.Get("X-User-Id"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v1/sessions/"), "/messages")
		var answer any
		switch r.Method {
		case http.MethodPost:
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			msgs, err := models.DecodeHistory(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			res, err := st.Store(r.Context(), id, msgs, sessionstore.StoreOptions{})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			// Written as serve writes it (by hand): the two differ in
			// serve's layers only.
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(res.Answer(len(msgs), true).AppendJSON(nil))
			return
		default:
			h, err := st.Load(r.Context(), id, sessionstore.LoadOptions{})
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			answer = h
		}
		_ = json.NewEncoder(w).Encode(answer)
	})
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

// rate is the calls per second over total time d (until the last call
// ended), the median and the p99.
func rate(lat []time.Duration, d time.Duration) (perSec, p50, p99 float64) {
	if len(lat) == 0 {
		return 0, 0, 0
	}
	slices.Sort(lat)
	return float64(len(lat)) / d.Seconds(), pct(lat, 0.5), pct(lat, 0.99)
}

package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// BenchmarkServeLayers is serve's own share of a store: the whole handler
// chain (request id, metrics, request log, host and cross-site checks,
// limits, auth, routing, body decoding, the answer) around a store with
// storage off, which returns the messages at once. remstore bench's HTTP
// part measures the same layers with the database and the network, beside
// a bare net/http handler. On the benchmark machine: 13-19 us and 101
// allocations a store (125 before the layers shared one context value and
// kept the received body), about half of it decoding the body (json.Valid's
// pass a fifth), the request log 2 us; a bare net/http round trip over
// loopback costs about 32 us of CPU there. Issue 45: 93 allocations, about
// 15% less CPU than 546ad9b (docs/performance.md). Since then it runs beside
// the work any handler of the route does (handler-work): serve's own layers
// are the difference.
func BenchmarkServeLayers(b *testing.B) {
	stores, err := sessionstore.NewStores(dbtest.NewSQLite(b), sessionstore.Options{Disabled: true})
	if err != nil {
		b.Fatal(err)
	}
	api, err := New(Options{Stores: stores, Insecure: true, Registry: prometheus.NewRegistry(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		b.Fatal(err)
	}
	turn := `[{"role":"user","content":"question 1: what are the options for the trip?"},` +
		`{"role":"assistant","content":"` + strings.Repeat("Here is a detailed answer with several options. ", 12) + `"},` +
		`{"role":"tool","content":"{\"status\":\"success\"}","tool_call_id":"call_1","tool_name":"search","tool_arguments":{"q":"trip"}},` +
		`{"role":"assistant","content":"Done."}]`
	// "serve" is the whole chain; "handler-work" what any handler of the
	// route does without serve's layers (decode the body, store, write the
	// answer), called directly: serve's own layers are the difference.
	b.Run("serve", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/sessions/bench/messages", strings.NewReader(turn))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("X-User-Id", "bench")
			w := httptest.NewRecorder()
			api.ServeHTTP(w, r)
			if w.Code/100 != 2 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	})
	b.Run("handler-work", func(b *testing.B) {
		st, err := stores.For("bench")
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			msgs, err := models.DecodeHistory([]byte(turn))
			if err != nil {
				b.Fatal(err)
			}
			res, err := st.Store(ctx, "bench", msgs, sessionstore.StoreOptions{})
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Discard.Write(res.Answer(len(msgs), st.Enabled()).AppendJSON(nil))
		}
	})
}

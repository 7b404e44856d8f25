package bench

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/remstore/remstore/sessionstore"
)

// ServePopWorkloads are "pop the last of N through serve": DELETE
// /v1/sessions/{id}/messages/last on the API served as `remstore serve`
// serves it (httpapi, its defaults and connection limits, a request log
// written to nowhere) on a loopback socket, one keep-alive client, for the
// sessions SweepWorkloads made (sizes, and the 20-message session the
// bounded loads start from). Each pop's message is stored back, untimed, as
// the library's pop workloads do. An outside harness saw 147-268 ms against
// 4-15 ms at 100,000 messages (issue 57): ServePopRatio must stay within
// 3x, as PopRatio does. stop ends the server.
func (e *Env) ServePopWorkloads(ctx context.Context, sizes []int) (ws []Workload, stop func(), err error) {
	stores, err := sessionstore.NewStores(e.DB, sessionstore.Options{})
	if err != nil {
		return nil, nil, err
	}
	addr, stopServe, err := serveAPI(stores)
	if err != nil {
		return nil, nil, err
	}
	client := newWireClient(addr, time.Minute)
	stop = func() { client.close(); stopServe() }
	const last = 20
	for _, n := range slices.Compact(append([]int{last}, sizes...)) {
		key := fmt.Sprintf("sweep-%d", n)
		if n == last {
			key = "bounded-20"
		}
		i := 0
		ws = append(ws, Workload{Name: fmt.Sprintf("serve pop: the last of %d", n), Rows: 1, Size: n,
			Setup: func() {
				i++
				if _, err := e.Store.Store(ctx, key, Turn(i)[:1], sessionstore.StoreOptions{}); err != nil {
					panic(fmt.Sprintf("serve pop workload: store one back: %v", err))
				}
			},
			Run: func(context.Context) error {
				status, size, err := client.do(http.MethodDelete, "/v1/sessions/"+key+"/messages/last", nil, "X-User-Id: bench")
				switch {
				case err != nil:
					return err
				case status != http.StatusOK || size < len(`{"message":{}}`):
					return fmt.Errorf("pop of %s through serve: status %d, %d bytes", key, status, size)
				}
				return nil
			}})
	}
	return ws, stop, nil
}

// ServePopRatio is PopRatio through serve: the pop of the last message of
// the largest session over the pop of the last of a 20-message session.
func ServePopRatio(rs []Result) (base, large Result, ratio float64, ok bool) {
	return scaleRatio(rs, "", "serve pop: the last of %d")
}

// scaleTargets are the targets of the parts at scale issue 57 set: a
// compacted session's load beside a small one's, a pop of the largest
// session beside a pop of a small one, on the library and through serve.
func scaleTargets(ws []Result, add func(name, goal string, measured float64, ok, known bool, format string)) {
	for _, t := range []struct {
		name string
		max  float64
		f    func([]Result) (Result, Result, float64, bool)
	}{{"load compacted to keep 20 / a 20-message load", 1.2, CompactedRatio},
		{"pop: the largest session / 20 messages", 3, PopRatio},
		{"pop through serve: the largest session / 20 messages", 3, ServePopRatio}} {
		_, large, x, ok := t.f(ws)
		name := t.name
		if ok {
			name = fmt.Sprintf("%s (%d)", name, large.Size)
		}
		add(name, fmt.Sprintf("<= %.2fx", t.max), x, x <= t.max, ok, "%.2fx")
	}
}

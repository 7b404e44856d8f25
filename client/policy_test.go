package client_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/models"
)

// policy is fixtures/client/retry_policy.json, which the Python client's
// tests read too.
type policy struct {
	Safety map[string]client.Safety `json:"safety"`
	Cases  []struct {
		Safety   client.Safety   `json:"safety"`
		Outcome  string          `json:"outcome"`
		Attempt  int             `json:"attempt"`
		Elapsed  float64         `json:"elapsed"`
		Decision client.Decision `json:"decision"`
	} `json:"cases"`
	MaxRetries  int     `json:"max_retries"`
	StoreWindow float64 `json:"store_window"`
	Delays      []struct {
		Backoff    float64  `json:"backoff"`
		MaxBackoff float64  `json:"max_backoff"`
		Attempt    int      `json:"attempt"`
		RetryAfter *float64 `json:"retry_after"`
		Min        float64  `json:"min"`
		Max        float64  `json:"max"`
	} `json:"delays"`
}

func readPolicy(t *testing.T) policy {
	b, err := os.ReadFile(fixtures.Path("client", "retry_policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p policy
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDecideFollowsThePolicyTable(t *testing.T) {
	p := readPolicy(t)
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	if client.DefaultStoreWindow != sec(p.StoreWindow) {
		t.Errorf("DefaultStoreWindow %v, the table %vs", client.DefaultStoreWindow, p.StoreWindow)
	}
	for _, c := range p.Cases {
		var out client.Outcome
		switch c.Outcome {
		case "connect_error":
		case "read_error":
			out.Sent = true
		default:
			out.Status, _ = strconv.Atoi(c.Outcome)
		}
		try := client.Try{Attempt: c.Attempt, MaxRetries: p.MaxRetries, Elapsed: sec(c.Elapsed), Window: sec(p.StoreWindow)}
		if got := client.Decide(c.Safety, try, out); got != c.Decision {
			t.Errorf("%s %s attempt %d: %s, the table says %s", c.Safety, c.Outcome, c.Attempt, got, c.Decision)
		}
	}
	for _, d := range p.Delays {
		ra := time.Duration(-1)
		if d.RetryAfter != nil {
			ra = sec(*d.RetryAfter)
		}
		for range 50 {
			got := client.Delay(sec(d.Backoff), sec(d.MaxBackoff), d.Attempt, ra)
			if got < sec(d.Min) || got > sec(d.Max) {
				t.Fatalf("%+v: %v outside [%v, %v]", d, got, d.Min, d.Max)
			}
		}
	}
}

// Every call's safety, as the table says, seen from outside: against a
// server that always answers 503, a resend call is sent 1 + MaxRetries
// times and an unsent call once; every call is in the table.
func TestEachCallsSafety(t *testing.T) {
	p := readPolicy(t)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("X-Request-Id", "req-503")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"storage is unavailable"}}`))
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, client.Options{MaxRetries: 2, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, StoreWindow: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	name := func(s string) *string { return &s }
	calls := map[string]func() error{
		"store": func() error {
			_, err := c.Store(ctx, "s", []models.HistoryMessage{{Role: "user"}}, client.StoreOptions{})
			return err
		},
		"store_pydantic_ai": func() error { _, err := c.StorePydanticAI(ctx, "s", []byte("[]"), client.StoreOptions{}); return err },
		"load":              func() error { _, err := c.Load(ctx, "s", client.LoadOptions{}); return err },
		"load_pydantic_ai":  func() error { _, err := c.LoadPydanticAI(ctx, "s", client.PydanticAIOptions{}); return err },
		"lookup":            func() error { _, err := c.Lookup(ctx, "k"); return err },
		"search":            func() error { _, err := c.Search(ctx, "q", client.SearchOptions{}); return err },
		"list_sessions":     func() error { _, err := c.ListSessions(ctx, client.ListOptions{}); return err },
		"get_session":       func() error { _, err := c.GetSession(ctx, "s", client.GetOptions{}); return err },
		"update_session":    func() error { _, err := c.UpdateSession(ctx, "s", client.SessionUpdate{Name: name("n")}); return err },
		"clear_messages":    func() error { _, err := c.ClearMessages(ctx, "s"); return err },
		"ready":             func() error { return c.Ready(ctx) },
		"fork":              func() error { _, err := c.Fork(ctx, "s", client.ForkOptions{}); return err },
		"cancel":            func() error { _, err := c.Cancel(ctx, "s", ""); return err },
		"delete_session":    func() error { return c.DeleteSession(ctx, "s", client.DeleteOptions{}) },
		"pop_message":       func() error { _, err := c.PopMessage(ctx, "s"); return err },
	}
	if len(calls) != len(p.Safety) {
		t.Fatalf("%d calls here, %d in the table", len(calls), len(p.Safety))
	}
	for callName, safety := range p.Safety {
		fn, ok := calls[callName]
		if !ok {
			t.Fatalf("the table names %q, which the client lacks", callName)
		}
		n.Store(0)
		err := fn()
		want := int32(1)
		if safety == client.Resend {
			want = 3
		}
		var e *client.Error
		got := n.Load()
		if safety == client.Durable { // as many as 50 ms hold, past MaxRetries
			if got <= 3 {
				t.Errorf("%s (%s): %d tries within its window, want more than MaxRetries+1", callName, safety, got)
			}
			want = got
		}
		if got != want || !asError(err, &e) || e.Status != 503 || e.RequestID != "req-503" || e.Code != "unavailable" || e.URL != srv.URL {
			t.Errorf("%s (%s): %d tries, %v; want %d tries and the 503 with its request id", callName, safety, got, err, want)
		}
		if (e != nil && e.Pending != nil) != (safety == client.Durable) {
			t.Errorf("%s (%s): Pending %v", callName, safety, e.Pending)
		}
	}
	// A connection that cannot be made is retried even for an unsent call.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	dead, _ := client.New("http://"+addr, client.Options{MaxRetries: 2, Backoff: time.Millisecond})
	err = func() error { _, err := dead.PopMessage(ctx, "s"); return err }()
	var e *client.Error
	if !asError(err, &e) || e.Tries != 3 || e.Status != 0 {
		t.Fatalf("unreachable server: %v", err)
	}
}

package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// restartable is serve's API on one address, stopped and started again as
// a restart of serve would.
type restartable struct {
	t    *testing.T
	addr string
	h    http.Handler
	mu   sync.Mutex
	srv  *http.Server
}

func newRestartable(t *testing.T, h http.Handler) *restartable {
	r := &restartable{t: t, h: h, addr: "127.0.0.1:0"}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func (r *restartable) start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	l, err := net.Listen("tcp", r.addr)
	if err != nil {
		r.t.Error(err)
		return
	}
	r.addr = l.Addr().String()
	srv := &http.Server{Handler: r.h, ReadHeaderTimeout: 5 * time.Second}
	r.srv = srv
	go func() { _ = srv.Serve(l) }()
}

func (r *restartable) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.srv != nil {
		_ = r.srv.Close()
		r.srv = nil
	}
}

func (r *restartable) url() string { return "http://" + r.addr }

// A store rides out serve being down (the client's defaults), each message
// stored once; past its window it gives up with the messages, and storing
// them later stores them once, however often.
func TestStoreRidesOutAnOutage(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	srv := newRestartable(t, agenttest.NewAPI(t, db, 200))
	ctx := context.Background()
	c, err := client.New(srv.url(), client.Options{APIKey: agenttest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	turn := []models.HistoryMessage{{Role: models.RoleUser, Content: "q"}, {Role: models.RoleAssistant, Content: "a paid answer"}}
	srv.stop()
	go func() { time.Sleep(3 * time.Second); srv.start() }()
	start := time.Now()
	res, err := c.Store(ctx, "outage", turn, client.StoreOptions{ExpectLast: "empty"})
	if err != nil || res.Stored != 2 {
		t.Fatalf("store across a 3 s outage: %+v %v", res, err)
	}
	t.Logf("stored %v after the outage began", time.Since(start).Round(time.Millisecond))

	// Past the window: the error carries the messages and the request.
	short, err := client.New(srv.url(), client.Options{APIKey: agenttest.APIKey, StoreWindow: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv.stop()
	more := []models.HistoryMessage{{Role: models.RoleUser, Content: "q2"}, {Role: models.RoleAssistant, Content: "another paid answer"}}
	_, err = short.Store(ctx, "outage", more, client.StoreOptions{ExpectLast: res.Last})
	var e *client.Error
	if !errors.As(err, &e) || e.Pending == nil || len(e.Pending.Messages) != 2 || e.Pending.Messages[1].Content != "another paid answer" ||
		e.RequestID == "" || e.URL != srv.url() || e.Tries < 2 {
		t.Fatalf("past the window: %v (%+v)", err, e)
	}
	srv.start()
	for i := range 2 {
		got, err := c.StorePending(ctx, e.Pending)
		if err != nil || got.Stored != 2-2*i {
			t.Fatalf("stored later, time %d: %+v %v", i+1, got, err)
		}
	}
	h, err := c.Load(ctx, "outage", client.LoadOptions{})
	if err != nil || len(h) != 4 {
		t.Fatalf("history: %d %v", len(h), err)
	}
}

// An answer lost after the store committed: the client sends it again and
// the server answers the retry without storing anything twice.
func TestStoreAnswerLostAfterCommit(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	api := agenttest.NewAPI(t, db, 200)
	var once sync.Once
	srv := newRestartable(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lost := false
		if r.Method == "POST" {
			once.Do(func() { lost = true })
		}
		if !lost {
			api.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(discard{w.Header()}, r) // committed; the answer never leaves
		conn, _, _ := w.(http.Hijacker).Hijack()
		_ = conn.Close()
	}))
	c, err := client.New(srv.url(), client.Options{APIKey: agenttest.APIKey, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.Store(ctx, "lost", []models.HistoryMessage{{Role: models.RoleUser, Content: "q"}, {Role: models.RoleAssistant, Content: "a"}}, client.StoreOptions{})
	if err != nil || res.Stored != 0 || len(res.Keys) != 2 {
		t.Fatalf("resend after a lost answer: %+v %v", res, err)
	}
	if h, err := c.Load(ctx, "lost", client.LoadOptions{}); err != nil || len(h) != 2 {
		t.Fatalf("history: %d %v", len(h), err)
	}
}

type discard struct{ h http.Header }

func (d discard) Header() http.Header         { return d.h }
func (d discard) Write(b []byte) (int, error) { return len(b), nil }
func (d discard) WriteHeader(int)             {}

// A turn whose deadline ends while serve is down, inside the store's
// retry window: the model's paid answer is not lost; the error says the
// deadline and carries the prompt and the answer in Pending, which stores
// them once serve is back.
func TestTurnDeadlineKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	srv := newRestartable(t, agenttest.NewAPI(t, db, 200))
	c, err := client.New(srv.url(), client.Options{APIKey: agenttest.APIKey})
	if err != nil {
		t.Fatal(err)
	}
	ask := func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
		srv.stop() // serve goes down while the model answers, for longer than the deadline
		return models.HistoryMessage{Role: models.RoleAssistant, Content: "a paid answer"}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err = sdk.RunTurn(ctx, c.Agent(), "deadline", "q", ask, nil)
	var e *client.Error
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &e) || e.Pending == nil || len(e.Pending.Messages) != 2 ||
		e.Pending.Messages[1].Content != "a paid answer" || !strings.Contains(err.Error(), "Pending") {
		t.Fatalf("turn past its deadline: %v (%+v)", err, e)
	}
	srv.start()
	if got, err := c.StorePending(context.Background(), e.Pending); err != nil || got.Stored != 2 {
		t.Fatalf("stored later: %+v %v", got, err)
	}
	if h, err := c.Load(context.Background(), "deadline", client.LoadOptions{}); err != nil || len(h) != 2 {
		t.Fatalf("history: %d %v", len(h), err)
	}
}

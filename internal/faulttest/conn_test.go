package faulttest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// Connection loss during a load or lookup: a clear error after bounded
// retries; a server that comes back within the backoff is reached.
func TestConnectionLossAndRetry(t *testing.T) {
	c := New(t)
	ctx := context.Background()
	db, err := repository.Open(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	st, _ := sessionstore.New(db, sessionstore.Options{UserID: "A", TruncateLength: 5})
	res, err := st.Store(ctx, "s", []models.HistoryMessage{{Role: "assistant", Content: "a long enough answer"}}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Crash(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, lerr := st.Load(ctx, "s", sessionstore.LoadOptions{})
	_, kerr := st.Lookup(ctx, res.Keys[0])
	took := time.Since(start)
	for _, err := range []error{lerr, kerr} {
		if !errors.Is(err, repository.ErrUnavailable) || !strings.Contains(err.Error(), "connection to the database lost (4 attempts)") {
			t.Fatalf("with the server down: %v", err)
		}
	}
	if took > 10*time.Second {
		t.Fatalf("retries took %s", took)
	}
	// The server comes back while the reads are backing off.
	patient, _ := sessionstore.New(db, sessionstore.Options{UserID: "A", TruncateLength: 5, Retries: 8})
	go func() { time.Sleep(200 * time.Millisecond); _ = c.Start() }()
	full, err := patient.Lookup(ctx, res.Keys[0])
	if err != nil || full != "a long enough answer" {
		t.Fatalf("after restart: %q %v", full, err)
	}
	if h, err := patient.Load(ctx, "s", sessionstore.LoadOptions{}); err != nil || len(h) != 1 {
		t.Fatalf("load after restart: %v", err)
	}
}

// statement_timeout and the connect timeout are honoured.
func TestTimeoutsHonoured(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewPostgresURL(t)
	setup := dbtest.OpenRaw(t, url)
	if err := migrations.Up(ctx, setup); err != nil {
		t.Fatal(err)
	}
	st, _ := sessionstore.New(setup, sessionstore.Options{UserID: "A"})
	var batch []models.HistoryMessage
	for i := range 1000 {
		batch = append(batch, models.HistoryMessage{Role: "assistant", Content: fmt.Sprintf("message %d %s", i, strings.Repeat("x", 500))})
	}
	for range 20 {
		if _, err := st.Store(ctx, "big", batch, sessionstore.StoreOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := repository.OpenWith(ctx, url, repository.Options{Configure: func(c *pgx.ConnConfig) { c.RuntimeParams["statement_timeout"] = "1" }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	slow, _ := sessionstore.New(db, sessionstore.Options{UserID: "A"})
	if _, err := slow.Load(ctx, "big", sessionstore.LoadOptions{}); err == nil || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a 20k-message load under statement_timeout=1ms: %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start := time.Now()
	_, err = repository.OpenWith(ctx, "postgres://u@"+ln.Addr().String()+"/db?sslmode=disable", repository.Options{Configure: func(c *pgx.ConnConfig) { c.ConnectTimeout = 300 * time.Millisecond }})
	if err == nil || !errors.Is(err, repository.ErrUnavailable) || time.Since(start) > 5*time.Second {
		t.Fatalf("connect to a silent server: %v after %s", err, time.Since(start))
	}
}

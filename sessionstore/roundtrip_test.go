package sessionstore_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// wireCounter counts the statements pgx sends (simple or extended protocol).
type wireCounter struct{ n atomic.Int64 }

func (c *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Storing a 4-message turn on PostgreSQL is one statement and no explicit
// transaction: one round trip; so is a lookup. A load is two: the plan (where
// the last compaction summary stands, whether the peer wrote rows) and the
// rows, the price of one streaming algorithm for Load and LoadEach.
func TestOneRoundTripPerTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &wireCounter{}
	db, err := repository.OpenWith(ctx, dbtest.NewPostgresURL(t), repository.Options{Configure: func(cfg *pgx.ConnConfig) { cfg.Tracer = c }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := migrations.Up(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: the warm-up prepares what the counted calls reuse
	s := newStore(t, db, "A", 200)
	turn := []models.HistoryMessage{msg("user", "q"), msg("assistant", strings.Repeat("a", 500)),
		{Role: "tool", Content: "{}", ToolCallID: "c"}, msg("assistant", "done")}
	count := func(what string, want int64, fn func() error) {
		t.Helper()
		if err := fn(); err != nil { // warm-up
			t.Fatal(err)
		}
		c.n.Store(0)
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		if n := c.n.Load(); n != want {
			t.Fatalf("%s sent %d statements, want %d", what, n, want)
		}
	}
	var key string
	count("store a 4-message turn", 1, func() error {
		res, err := s.StoreMessages(ctx, "rt", turn, "")
		key = res.Keys[1]
		return err
	})
	count("load", 2, func() error { _, err := s.Load(ctx, "rt", sessionstore.LoadOptions{}); return err })
	count("lookup", 1, func() error { _, err := s.Lookup(ctx, key); return err })
	// A completed session rejects the fast path's write too, and writes nothing.
	if _, err := s.SetStatus(ctx, "rt", "completed", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreMessages(ctx, "rt", turn, ""); err == nil || !strings.Contains(err.Error(), "not active") {
		t.Fatalf("store into completed session: %v", err)
	}
	if h, _ := s.Load(ctx, "rt", sessionstore.LoadOptions{}); len(h) != 8 {
		t.Fatalf("%d messages after the rejected write", len(h))
	}
}

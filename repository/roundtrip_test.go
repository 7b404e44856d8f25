package repository_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// wireCounter counts the statements pgx sends (simple or extended protocol).
type wireCounter struct{ n atomic.Int64 }

func (c *wireCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *wireCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// Storing a 4-message turn on PostgreSQL is one statement and no explicit
// transaction: one round trip. Load and lookup are one statement each.
func TestOneRoundTripPerTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &wireCounter{}
	db, err := repository.OpenWith(ctx, dbtest.NewPostgresURL(t), func(cfg *pgx.ConnConfig) { cfg.Tracer = c })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := repository.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1) // one connection: the warm-up prepares what the counted calls reuse
	s := newStore(t, db, "A", 200)
	turn := []models.HistoryMessage{msg("user", "q"), msg("assistant", strings.Repeat("a", 500)),
		{Role: "tool", Content: "{}", ToolCallID: "c"}, msg("assistant", "done")}
	count := func(what string, fn func() error) {
		t.Helper()
		if err := fn(); err != nil { // warm-up
			t.Fatal(err)
		}
		c.n.Store(0)
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		if n := c.n.Load(); n != 1 {
			t.Fatalf("%s sent %d statements, want 1", what, n)
		}
	}
	var key string
	count("store a 4-message turn", func() error {
		res, err := s.StoreMessages(ctx, "rt", turn, "")
		key = res.Keys[1]
		return err
	})
	count("load", func() error { _, err := s.Load(ctx, "rt", repository.LoadOptions{}); return err })
	count("lookup", func() error { _, err := s.Lookup(ctx, key); return err })
	// A completed session rejects the fast path's write too, and writes nothing.
	if _, err := s.SetStatus(ctx, "rt", "completed", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreMessages(ctx, "rt", turn, ""); err == nil || !strings.Contains(err.Error(), "not active") {
		t.Fatalf("store into completed session: %v", err)
	}
	if h, _ := s.Load(ctx, "rt", repository.LoadOptions{}); len(h) != 8 {
		t.Fatalf("%d messages after the rejected write", len(h))
	}
}

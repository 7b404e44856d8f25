package repository_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/uptrace/bun"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

type countHook struct{ n atomic.Int64 }

func (h *countHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context {
	h.n.Add(1)
	return ctx
}
func (h *countHook) AfterQuery(context.Context, *bun.QueryEvent) {}

// Storing a 4-message turn on PostgreSQL is one statement and no explicit
// transaction: one round trip. Load and lookup are one statement each.
func TestOneRoundTripPerTurn(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	h := &countHook{}
	db.AddQueryHook(h)
	s := newStore(t, db, "A", 200)
	ctx := context.Background()
	turn := []models.HistoryMessage{msg("user", "q"), msg("assistant", strings.Repeat("a", 500)),
		{Role: "tool", Content: "{}", ToolCallID: "c"}, msg("assistant", "done")}
	for i := range 3 {
		h.n.Store(0)
		res, err := s.StoreMessages(ctx, "rt", turn, "")
		if err != nil {
			t.Fatal(err)
		}
		if n := h.n.Load(); n != 1 {
			t.Fatalf("turn %d took %d statements, want 1", i, n)
		}
		if !strings.HasSuffix(res.Keys[3], "-msg-"+itoa(4*i+3)) {
			t.Fatalf("keys %v", res.Keys)
		}
	}
	h.n.Store(0)
	hist, err := s.Load(ctx, "rt", repository.LoadOptions{})
	if err != nil || h.n.Load() != 1 {
		t.Fatalf("load took %d statements", h.n.Load())
	}
	h.n.Store(0)
	if _, err := s.Lookup(ctx, hist[1].EntityKey); err != nil || h.n.Load() != 1 {
		t.Fatalf("lookup took %d statements (%v)", h.n.Load(), err)
	}
	// A completed session rejects the fast path's write too, and writes nothing.
	if _, err := s.SetStatus(ctx, "rt", "completed", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.StoreMessages(ctx, "rt", turn, ""); err == nil || !strings.Contains(err.Error(), "not active") {
		t.Fatalf("store into completed session: %v", err)
	}
	if h, _ := s.Load(ctx, "rt", repository.LoadOptions{}); len(h) != 12 {
		t.Fatalf("%d messages after the rejected write", len(h))
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

package sessionstore_test

import (
	"context"
	"net"
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

// wireCounter counts round trips on the wire: each flight of writes to the
// server after it answered (pipelined statements are one flight).
type wireCounter struct{ n atomic.Int64 }

type countedConn struct {
	net.Conn
	c       *wireCounter
	writing atomic.Bool
}

func (cc *countedConn) Write(b []byte) (int, error) {
	if !cc.writing.Swap(true) {
		cc.c.n.Add(1)
	}
	return cc.Conn.Write(b)
}

func (cc *countedConn) Read(b []byte) (int, error) {
	cc.writing.Store(false)
	return cc.Conn.Read(b)
}

func (c *wireCounter) configure(cfg *pgx.ConnConfig) {
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countedConn{Conn: conn, c: c}, nil
	}
}

// Storing a 4-message turn on PostgreSQL is one statement and no explicit
// transaction: one round trip; so are a lookup and the load of a session
// only remstore wrote (one pipeline: its rows statement checks on the server
// that the session needs no plan). A session with a row the peer wrote
// loads in four: that check answering with one row, the plan, the keys the
// peer's rows must not take, the rows.
func TestOneRoundTripPerTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := &wireCounter{}
	db, err := repository.OpenWith(ctx, dbtest.NewPostgresURL(t), repository.Options{Configure: c.configure})
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
			t.Fatalf("%s took %d round trips, want %d", what, n, want)
		}
	}
	var key string
	count("store a 4-message turn", 1, func() error {
		res, err := s.Store(ctx, "rt", turn, sessionstore.StoreOptions{})
		key = res.Keys[1]
		return err
	})
	count("load", 1, func() error { _, err := s.Load(ctx, "rt", sessionstore.LoadOptions{}); return err })
	count("lookup", 1, func() error { _, err := s.Lookup(ctx, key); return err })
	peer, _ := s.SessionUUID("peer-rt")
	if _, err := s.Store(ctx, "peer-rt", turn, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, content, metadata, user_id, tenant_id)
		VALUES (gen_random_uuid(), ?, 'assistant', 'from the peer', '{"message_index": 0}', 'A', 'A')`, peer); err != nil {
		t.Fatal(err)
	}
	count("load with a peer row", 4, func() error {
		h, err := s.Load(ctx, "peer-rt", sessionstore.LoadOptions{})
		if err == nil && len(h) != 5 {
			t.Fatalf("loaded %d of 5", len(h))
		}
		return err
	})
	// A completed session rejects the fast path's write too, and writes nothing.
	if _, err := s.SetStatus(ctx, "rt", "completed", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store(ctx, "rt", turn, sessionstore.StoreOptions{}); err == nil || !strings.Contains(err.Error(), "not active") {
		t.Fatalf("store into completed session: %v", err)
	}
	if h, _ := s.Load(ctx, "rt", sessionstore.LoadOptions{}); len(h) != 8 {
		t.Fatalf("%d messages after the rejected write", len(h))
	}
}

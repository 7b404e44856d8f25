package httpapi

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository/migrations"
)

// A search refused by its budget costs the database nothing: it is refused
// before the index catches up. A catch-up on PostgreSQL waits up to 250 ms
// for another indexer's lock, holding a connection of the main pool, so
// refused searches sent at once (64 in flight on one key) held the pool's
// 32 connections while an indexer worked, and another tenant's stores
// waited.
func TestRefusedSearchWaitsForNothing(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	s := newAPI(t, db, Options{})
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx) // another indexer at work
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, '`+migrations.SearchQueueTable+`'::regclass::oid::int4)`, int32(0x72656d5f)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		take func()
	}{
		{"a search of the key running", func() { s.searches.take("key 0", time.Now()) }},
		{"the key's credit spent", func() {
			now := time.Now()
			s.searches.done("key 0", now, 0)
			s.searches.take("key 0", now)
			s.searches.done("key 0", now, time.Minute)
		}},
	} {
		c.take()
		r := httptest.NewRequest("GET", "/v1/search?q=lisbon", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("X-User-Id", "mallory")
		w := httptest.NewRecorder()
		start := time.Now()
		s.ServeHTTP(w, r)
		if took := time.Since(start); w.Code != 429 || took > 100*time.Millisecond {
			t.Errorf("%s: %d after %v; want 429 at once", c.name, w.Code, took)
		}
	}
}

// A search's catch-up holds its user's turn but none of the MaxSearches:
// catch-ups cost their users nothing, so a tenant catching up (behind
// another indexer, or indexing a flood of its own writes) must not hold
// the slots another tenant's searches need.
func TestCatchUpHoldsNoSearchSlot(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	s := newAPI(t, db, Options{MaxSearches: 1})
	ctx := context.Background()
	tx, err := db.Pool.Begin(ctx) // another indexer at work
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, '`+migrations.SearchQueueTable+`'::regclass::oid::int4)`, int32(0x72656d5f)); err != nil {
		t.Fatal(err)
	}
	search := func(auth string) int {
		r := httptest.NewRequest("GET", "/v1/search?q=lisbon", nil)
		r.Header.Set("Authorization", "Bearer "+auth)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	first := make(chan int)
	go func() { first <- search(key) }() // catching up for 250 ms
	time.Sleep(50 * time.Millisecond)
	if code := search("alice-only-0123456789"); code != 200 {
		t.Errorf("alice's search beside another's catch-up: %d", code)
	}
	if code := <-first; code != 200 {
		t.Errorf("the first search: %d", code)
	}
}

package httpapi

import (
	"sync"
	"time"
)

// budget counts holders in total and per key (a client address), refusing
// beyond either bound. It never waits: a refused caller answers 429 or
// closes a connection, it does not queue.
type budget struct {
	mu     sync.Mutex
	total  int
	perKey int
	n      int
	by     map[string]int
}

func newBudget(total, perKey int) *budget {
	return &budget{total: total, perKey: perKey, by: map[string]int{}}
}

func (b *budget) take(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.total || b.by[key] >= b.perKey {
		return false
	}
	b.n++
	b.by[key]++
	return true
}

func (b *budget) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n >= b.total
}

func (b *budget) give(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.by[key]--; b.by[key] <= 0 {
		delete(b.by, key)
	}
}

// searchGate is a search's budget per user: one search of a
// user at a time, at most total at once, and a duty cycle: a search that
// took t over 50 ms keeps the user's next one waiting 4t, so one tenant's searches use
// at most a fifth of the time however fast it sends them (on a two-core
// machine one search is half of it). It never waits: a refused caller gets
// 429 with the time it may try again.
type searchGate struct {
	mu    sync.Mutex
	total int
	n     int
	by    map[string]time.Time // running (zero time), or next allowed start
}

// searchRest is the rest a search of t buys: 4t, a fifth of the time;
// searchFree is what a search may take and buy none (a person's or an
// agent's ordinary search is never refused for the one before it).
const (
	searchRest = 4
	searchFree = 50 * time.Millisecond
)

func newSearchGate(total int) *searchGate {
	return &searchGate{total: total, by: map[string]time.Time{}}
}

// take starts a search of user; when it may not, retry says when to ask again.
func (g *searchGate) take(user string, now time.Time) (ok bool, retry time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	next, seen := g.by[user]
	switch {
	case seen && next.IsZero(): // one of theirs is running
		return false, time.Second
	case seen && now.Before(next):
		return false, next.Sub(now)
	case g.n >= g.total:
		return false, time.Second
	}
	if len(g.by) > 10_000 { // forget rests that are over
		for u, t := range g.by {
			if !t.IsZero() && now.After(t) {
				delete(g.by, u)
			}
		}
	}
	g.n++
	g.by[user] = time.Time{}
	return true, 0
}

// done ends user's search, which took took.
func (g *searchGate) done(user string, end time.Time, took time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	if took <= searchFree {
		delete(g.by, user)
		return
	}
	g.by[user] = end.Add(searchRest * took)
}

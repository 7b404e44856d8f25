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

func (b *budget) take(key string) bool { return b.takeN(key, 1) }

// takeN holds n units (a body's bytes in bigBodies) for key, or none.
func (b *budget) takeN(key string, n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n+n > b.total || b.by[key]+n > b.perKey {
		return false
	}
	b.n += n
	b.by[key] += n
	return true
}

func (b *budget) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n >= b.total
}

func (b *budget) give(key string) { b.giveN(key, 1) }

func (b *budget) giveN(key string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n -= n
	if b.by[key] -= n; b.by[key] <= 0 {
		delete(b.by, key)
	}
}

// held is what key holds now.
func (b *budget) held(key string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.by[key]
}

// searchGate is a search's budget per user: one search of a user at a
// time, at most total at once, and a share of the time: a user's searches
// earn credit at a fifth of the clock's pace, up to searchCredit, and each
// spends what it took; one may start while the credit is above zero. So a
// tenant's searches take a fifth of the time at most however fast it sends
// them (on a two-core machine one search is half of it), while a person's
// or an agent's few searches in a row spend credit they have. It never
// waits: a refused caller gets 429 with the time its credit is back.
type searchGate struct {
	mu    sync.Mutex
	total int
	n     int
	by    map[string]*searcher
}

// searcher is one user's search account.
type searcher struct {
	running bool
	credit  time.Duration // at at; negative: owed
	at      time.Time
}

// searchShare is the share of the time a user's searches may take (one
// in searchShare); searchCredit is what a user may spend at once. The
// credit replaces a free allowance of 50 ms a search, which let searches
// of 29 ms run back to back: a flooding tenant then took another's loads
// down to 67% of their rate, not the 93% a fifth of the time leaves them.
const (
	searchShare  = 5
	searchCredit = 250 * time.Millisecond
)

func newSearchGate(total int) *searchGate {
	return &searchGate{total: total, by: map[string]*searcher{}}
}

// earn brings a's credit to now.
func (a *searcher) earn(now time.Time) {
	if now.After(a.at) {
		a.credit = min(searchCredit, a.credit+now.Sub(a.at)/searchShare)
		a.at = now
	}
}

// reserve takes user's turn (one at a time, within the credit), not yet one
// of the total: what runs before the search (the index's catch-up, which
// costs the user nothing) holds none of the slots others' searches need.
// start or cancel follows.
func (g *searchGate) reserve(user string, now time.Time) (ok bool, retry time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	a := g.by[user]
	if a == nil {
		a = &searcher{credit: searchCredit, at: now}
	}
	a.earn(now)
	switch {
	case a.running: // one of theirs is running
		return false, time.Second
	case a.credit <= 0:
		return false, -a.credit*searchShare + time.Millisecond
	case g.n >= g.total:
		return false, time.Second
	}
	if len(g.by) > 10_000 { // forget accounts that are whole again
		for u, b := range g.by {
			if !b.running && b.credit+now.Sub(b.at)/searchShare >= searchCredit {
				delete(g.by, u)
			}
		}
	}
	a.running = true
	g.by[user] = a
	return true, 0
}

// start takes one of the total for user's reserved turn; false (the turn
// given back) when all are taken.
func (g *searchGate) start(user string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n >= g.total {
		if a := g.by[user]; a != nil {
			a.running = false
		}
		return false
	}
	g.n++
	return true
}

// cancel gives back user's reserved turn, not started, uncharged.
func (g *searchGate) cancel(user string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if a := g.by[user]; a != nil {
		a.running = false
	}
}

// done ends user's search, which took took.
func (g *searchGate) done(user string, end time.Time, took time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n--
	a := g.by[user]
	if a == nil {
		return
	}
	a.running = false
	a.earn(end)
	a.credit -= took
}

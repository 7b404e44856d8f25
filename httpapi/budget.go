package httpapi

import "sync"

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

func (b *budget) give(key string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.by[key]--; b.by[key] <= 0 {
		delete(b.by, key)
	}
}

package viewer

import (
	"sync"
	"time"
)

// Sign-in failures are counted per client address and per key prefix in a
// fixed window: after SignInFailures failures within SignInWindow, sign-in
// from that client, or with a key of that prefix, is refused until the
// window ends; then the right key works at once. The table is bounded
// (maxTracked entries; expired ones go first, then the oldest).
const (
	SignInFailures = 5
	SignInWindow   = time.Minute
	keyPrefixLen   = 6
	maxTracked     = 10000
)

type failures struct {
	n     int
	start time.Time
}

type limiter struct {
	mu  sync.Mutex
	m   map[string]*failures
	now func() time.Time
}

func newLimiter(now func() time.Time) *limiter {
	return &limiter{m: map[string]*failures{}, now: now}
}

// subjects are the counters a sign-in attempt touches.
func subjects(client, key string) []string {
	p := key
	if len(p) > keyPrefixLen {
		p = p[:keyPrefixLen]
	}
	out := []string{"client " + client}
	if p != "" {
		out = append(out, "key "+p)
	}
	return out
}

// wait is how long sign-in stays refused for this client or key (0: not).
func (l *limiter) wait(client, key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var w time.Duration
	for _, s := range subjects(client, key) {
		f := l.m[s]
		if f == nil {
			continue
		}
		if left := f.start.Add(SignInWindow).Sub(now); left <= 0 {
			delete(l.m, s)
		} else if f.n >= SignInFailures && left > w {
			w = left
		}
	}
	return w
}

// fail counts a failed sign-in.
func (l *limiter) fail(client, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, s := range subjects(client, key) {
		f := l.m[s]
		if f == nil || now.Sub(f.start) >= SignInWindow {
			if f == nil && len(l.m) >= maxTracked {
				l.evict(now)
			}
			f = &failures{start: now}
			l.m[s] = f
		}
		f.n++
	}
}

func (l *limiter) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, f := range l.m {
		if now.Sub(f.start) >= SignInWindow {
			delete(l.m, k)
		} else if oldest == "" || f.start.Before(at) {
			oldest, at = k, f.start
		}
	}
	if len(l.m) >= maxTracked {
		delete(l.m, oldest)
	}
}

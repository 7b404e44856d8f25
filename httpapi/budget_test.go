package httpapi

import "time"

// take starts a search of user as beginSearch does with nothing to
// prepare (reserve, then start); when it may not, retry says when to ask
// again. The tests drive the gate by it.
func (g *searchGate) take(user string, now time.Time) (ok bool, retry time.Duration) {
	if ok, retry := g.reserve(user, now); !ok {
		return false, retry
	}
	if !g.start(user) {
		return false, time.Second
	}
	return true, 0
}

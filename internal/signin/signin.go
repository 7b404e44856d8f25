// Package signin limits guessing of keys: failed sign-ins (the viewer's form,
// the API's bearer keys) counted per client network in a fixed window, with a
// global budget, so one address can slow only itself. Both surfaces use it.
package signin

import (
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Failures within Window from one client network refuse its sign-ins until
// the window ends, without checking the key; then the right key works at
// once. Once GlobalBudget failures are counted in a window from all
// clients together (guessing spread over many addresses), each client
// network is allowed one failure in the window instead of Failures. The
// table is bounded (maxTracked networks; expired ones go first, then the
// oldest). No counter is shared between clients: one address cannot lock
// out another (a key-prefix counter did: issue 42 M5).
const (
	Failures     = 5
	Window       = time.Minute
	GlobalBudget = 100
	maxTracked   = 10000
)

type failures struct {
	n     int
	start time.Time
}

// Limiter counts failed sign-ins. The zero value is not ready: use New.
type Limiter struct {
	mu     sync.Mutex
	m      map[string]*failures
	global failures
	now    func() time.Time
}

// New returns a limiter on clock now (nil: time.Now).
func New(now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{m: map[string]*failures{}, now: now}
}

// Network is the counter a client address falls in: the address itself for
// IPv4, its /64 for IPv6 (one host holds a /64; counting its addresses one
// by one would give it 2^64 tries).
func Network(client string) string {
	// The common forms ("1.2.3.4:5", "[::1]:5", a bare address) through
	// net/netip, which allocates nothing to parse: every request with a
	// body asks (issue 45, serve's own share of a store).
	if ap, err := netip.ParseAddrPort(client); err == nil && ap.Addr().Zone() == "" {
		return network(ap.Addr(), client[:strings.LastIndexByte(client, ':')])
	}
	if a, err := netip.ParseAddr(client); err == nil && a.Zone() == "" {
		return network(a, client)
	}
	return networkByNet(client)
}

// networkByNet is Network through package net alone, for every form
// (a zone, a host name): what Network was, and FuzzNetwork's oracle.
func networkByNet(client string) string {
	h := client
	if hh, _, err := net.SplitHostPort(client); err == nil {
		h = hh
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return h
	}
	if v4 := ip.To4(); v4 != nil {
		return v4.String()
	}
	return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// network is Network of a parsed address written host in the client
// string: an IPv4 address as it is (host itself when already so), an IPv6
// one as its /64.
func network(a netip.Addr, host string) string {
	if a.Is4() || a.Is4In6() {
		var buf [15]byte // "255.255.255.255"
		if b := a.Unmap().AppendTo(buf[:0]); string(b) != host {
			return string(b)
		}
		return host
	}
	return netip.PrefixFrom(a, 64).Masked().Addr().String() + "/64"
}

// allowed is the failures a client may have in the window now.
func (l *Limiter) allowed(now time.Time) int {
	if now.Sub(l.global.start) < Window && l.global.n >= GlobalBudget {
		return 1
	}
	return Failures
}

// Wait is how long sign-in stays refused for client (0: not).
func (l *Limiter) Wait(client string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	k := Network(client)
	f := l.m[k]
	if f == nil {
		return 0
	}
	left := f.start.Add(Window).Sub(now)
	if left <= 0 {
		delete(l.m, k)
		return 0
	}
	if f.n >= l.allowed(now) {
		return left
	}
	return 0
}

// Fail counts a failed sign-in of client.
func (l *Limiter) Fail(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.Sub(l.global.start) >= Window {
		l.global = failures{start: now}
	}
	l.global.n++
	k := Network(client)
	f := l.m[k]
	if f == nil || now.Sub(f.start) >= Window {
		if f == nil && len(l.m) >= maxTracked {
			l.evict(now)
		}
		f = &failures{start: now}
		l.m[k] = f
	}
	f.n++
}

func (l *Limiter) evict(now time.Time) {
	var oldest string
	var at time.Time
	for k, f := range l.m {
		if now.Sub(f.start) >= Window {
			delete(l.m, k)
		} else if oldest == "" || f.start.Before(at) {
			oldest, at = k, f.start
		}
	}
	if len(l.m) >= maxTracked {
		delete(l.m, oldest)
	}
}

package httpapi

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/remstore/remstore/internal/signin"
)

// Defaults of LimitListener, as serve uses them.
const (
	DefaultMaxConns          = 4096
	DefaultMaxConnsPerClient = 256
	DefaultIdleTimeout       = 60 * time.Second
	// DefaultGuestIdle is how long a connection that has not shown an API
	// key may stay idle (DefaultIdleTimeout once it has).
	DefaultGuestIdle = 10 * time.Second
)

// HTTPServer is the http.Server remstore serve runs h in: request headers
// within 10 s (net/http bounds a TLS handshake by it too, the smaller of
// the read and write timeouts), idle connections closed after idle, and a
// handler writing to a client that does not read ended after the body and
// request timeouts and 10 s more (WriteTimeout starts when the headers
// have been read).
func HTTPServer(h http.Handler, idle, bodyTimeout, requestTimeout time.Duration) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle,
		WriteTimeout: bodyTimeout + requestTimeout + 10*time.Second, MaxHeaderBytes: 64 << 10}
}

// refusal is what a connection over the caps is told before it is closed.
var refusal = func() []byte {
	body := `{"error":{"code":"too_many_connections","message":"too many open connections; try again later"}}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n" +
		"Connection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

// LimitListener caps the connections open at once, in total and per client
// IP address, so idle or slow clients cannot use up the process's
// descriptors (a connection is a descriptor; an IPv6 client's cap is its
// /64's): a connection over either cap is answered 503 and closed at once,
// never queued. Keep total below the descriptor limit (serve does).
//
// Connections that have not carried a request with a valid API key are
// guests (4,096 idle keep-alives from 17 addresses held every
// slot): at most half the slots are theirs, an idle guest is closed after
// GuestIdle, and when a new connection finds the guests' share (or every
// slot) taken, the guest idle longest is closed to make room, so signed-in
// clients keep the other half and a newcomer is never locked out by
// connections that only wait. Attach hooks the listener to its server.
func LimitListener(ln net.Listener, total, perClient int) *Listener {
	return &Listener{Listener: ln, b: newBudget(total, perClient), guestCap: max(1, total/2), GuestIdle: DefaultGuestIdle,
		guests: map[*limitedConn]bool{}}
}

// Listener is a net.Listener with connection caps; see LimitListener.
type Listener struct {
	net.Listener
	b *budget
	// GuestIdle is how long a guest connection may stay idle.
	GuestIdle time.Duration

	mu       sync.Mutex
	attached bool // Attach was called: without the states, no guest rule
	guestCap int
	guests   map[*limitedConn]bool // open and not signed in
}

// Accept returns the next connection within the caps.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		// Per client network: an IPv6 /64 is one host's, and counting its
		// addresses one by one would give it 2^64 caps (issue 42 M2).
		ip := signin.Network(c.RemoteAddr().String())
		l.mu.Lock()
		attached := l.attached
		guestsFull := attached && len(l.guests) >= l.guestCap
		l.mu.Unlock()
		if attached && (guestsFull || l.b.full()) {
			// Room for the newcomer: the guest waiting longest goes (its
			// slot is free once it is closed), an idle one first. A guest
			// that is busy has not shown a key either and is bounded in
			// time anyway (headers, body, answer): 2,048 guests each
			// sending a body it never finished held every guest slot, and
			// a newcomer, who cannot show its key before it is accepted,
			// was refused every time.
			l.evictGuest()
		}
		if !l.b.take(ip) {
			refuse(c)
			continue
		}
		lc := &limitedConn{Conn: c, l: l, release: func() { l.b.give(ip) }, since: time.Now()}
		l.mu.Lock()
		l.guests[lc] = true
		l.mu.Unlock()
		return lc, nil
	}
}

// refuse answers c 503 and closes it. The socket buffer takes the answer at
// once; the deadline is for a peer whose window is closed.
func refuse(c net.Conn) {
	_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = c.Write(refusal)
	_ = c.Close()
}

// evictGuest closes the guest connection idle longest or, when none is
// idle, the one busy longest, if there is a guest.
func (l *Listener) evictGuest() bool {
	l.mu.Lock()
	var oldest *limitedConn
	for c := range l.guests {
		if oldest == nil || c.idle && !oldest.idle || c.idle == oldest.idle && c.since.Before(oldest.since) {
			oldest = c
		}
	}
	l.mu.Unlock()
	if oldest == nil {
		return false
	}
	_ = oldest.Close()
	return true
}

// Attach lets l see its connections' states (idle or busy) and lets the
// API mark a connection signed in (SignedIn): set before srv serves.
func (l *Listener) Attach(srv *http.Server) {
	l.mu.Lock()
	l.attached = true
	l.mu.Unlock()
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		lc := unwrapConn(c)
		if lc == nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		switch st {
		case http.StateNew, http.StateIdle:
			lc.idle, lc.since = true, time.Now()
			if l.guests[lc] {
				if lc.timer != nil {
					lc.timer.Stop()
				}
				lc.timer = time.AfterFunc(l.GuestIdle, func() { l.closeIfIdleGuest(lc) })
			}
		case http.StateActive:
			lc.idle, lc.since = false, time.Now()
		}
	}
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if lc := unwrapConn(c); lc != nil {
			return context.WithValue(ctx, connKey{}, lc)
		}
		return ctx
	}
}

func (l *Listener) closeIfIdleGuest(c *limitedConn) {
	l.mu.Lock()
	close := c.idle && l.guests[c] && time.Since(c.since) >= l.GuestIdle
	l.mu.Unlock()
	if close {
		_ = c.Close()
	}
}

type connKey struct{}

// SignedIn marks the connection of a request whose API key was valid: it
// is no guest from then on (see LimitListener).
func SignedIn(ctx context.Context) {
	lc, _ := ctx.Value(connKey{}).(*limitedConn)
	if lc == nil || lc.l == nil {
		return
	}
	lc.l.mu.Lock()
	if lc.l.guests[lc] {
		delete(lc.l.guests, lc)
		if lc.timer != nil {
			lc.timer.Stop()
		}
	}
	lc.l.mu.Unlock()
}

// unwrapConn finds the limitedConn under c (a TLS connection wraps it).
func unwrapConn(c net.Conn) *limitedConn {
	for c != nil {
		switch x := c.(type) {
		case *limitedConn:
			return x
		case interface{ NetConn() net.Conn }:
			c = x.NetConn()
		default:
			return nil
		}
	}
	return nil
}

type limitedConn struct {
	net.Conn
	l       *Listener
	once    sync.Once
	release func()
	// guarded by l.mu
	idle  bool
	since time.Time // of the last change between idle and busy
	timer *time.Timer
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.guests, c)
		if c.timer != nil {
			c.timer.Stop()
		}
		c.l.mu.Unlock()
		c.release()
	})
	return err
}

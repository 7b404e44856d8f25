package httpapi

import (
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
// /64's): a connection over either cap
// is answered 503 and closed at once, never queued. Keep total below the
// descriptor limit (serve does).
func LimitListener(ln net.Listener, total, perClient int) *Listener {
	return &Listener{Listener: ln, b: newBudget(total, perClient)}
}

// Listener is a net.Listener with connection caps; see LimitListener.
type Listener struct {
	net.Listener
	b *budget
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
		if l.b.take(ip) {
			return &limitedConn{Conn: c, release: func() { l.b.give(ip) }}, nil
		}
		// The socket buffer takes this at once; the deadline is for a peer
		// whose window is closed.
		_ = c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		_, _ = c.Write(refusal)
		_ = c.Close()
	}
}

type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

package httpapi

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// fakeConn is a connection from addr that records whether it was closed.
type fakeConn struct {
	net.Conn
	addr   net.Addr
	mu     sync.Mutex
	closed bool
}

func (c *fakeConn) RemoteAddr() net.Addr             { return c.addr }
func (c *fakeConn) Write(b []byte) (int, error)      { return len(b), nil }
func (c *fakeConn) SetWriteDeadline(time.Time) error { return nil }
func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// fakeListener hands out conns, then blocks.
type fakeListener struct {
	net.Listener
	conns chan net.Conn
}

func (l *fakeListener) Accept() (net.Conn, error) { return <-l.conns, nil }

// An IPv6 client's connection cap is its /64's (issue 42 M2): 300
// connections from 300 addresses of one /64 get the per-client cap, not 300.
func TestConnectionCapPerIPv6Network(t *testing.T) {
	fl := &fakeListener{conns: make(chan net.Conn, 400)}
	var conns []*fakeConn
	for i := range 300 {
		c := &fakeConn{addr: &net.TCPAddr{IP: net.ParseIP(fmt.Sprintf("2001:db8:0:7::%x", i+1)), Port: 4000}}
		conns = append(conns, c)
		fl.conns <- c
	}
	other := &fakeConn{addr: &net.TCPAddr{IP: net.ParseIP("2001:db8:0:8::1"), Port: 4000}}
	fl.conns <- other
	l := LimitListener(fl, 1000, 4)
	accepted := 0
	for range 5 { // 4 of the /64, then the other network's
		c, _ := l.Accept()
		if c.RemoteAddr() == other.addr {
			break
		}
		accepted++
	}
	closed := 0
	for _, c := range conns {
		if c.closed {
			closed++
		}
	}
	if accepted != 4 || closed != 296 {
		t.Fatalf("accepted %d of the /64, refused %d; want 4 and 296", accepted, closed)
	}
}

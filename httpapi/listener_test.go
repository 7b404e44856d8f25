package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
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

// M2 of issue 42: idle connections that never show a key, from many
// addresses (each under the per-client cap), held every slot and every
// other client got 503. Now they are guests: at most half the slots, closed
// after GuestIdle, and the one idle longest makes room for a newcomer; a
// signed-in connection is not a guest and keeps its keep-alive.
func TestIdleGuestsCannotDenyASignedInClient(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewSQLite(t), Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const total = 16
	l := LimitListener(ln, total, 4)
	l.GuestIdle = 2 * time.Second
	srv := HTTPServer(api, time.Minute, time.Second, 5*time.Second)
	l.Attach(srv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().(*net.TCPAddr)
	// Hoarders: 4 connections from each of 8 loopback addresses, idle.
	var hoard []net.Conn
	for a := range 8 {
		for range 4 {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+a))}}
			c, err := d.Dial("tcp", addr.String())
			if err != nil {
				t.Fatal(err)
			}
			hoard = append(hoard, c)
		}
	}
	t.Cleanup(func() {
		for _, c := range hoard {
			_ = c.Close()
		}
	})
	time.Sleep(200 * time.Millisecond) // every hoarder accepted or refused
	// A signed-in client on new connections, one request each: served.
	get := func(c *http.Client) int {
		t.Helper()
		req, _ := http.NewRequest("GET", "http://"+addr.String()+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-User-Id", "alice")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("signed-in request: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for i := range 20 {
		if code := get(fresh); code != 200 {
			t.Fatalf("signed-in request %d: %d with %d idle guests holding the slots", i, code, len(hoard))
		}
	}
	// Its keep-alive connection outlives GuestIdle: it is signed in.
	keep := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	if code := get(keep); code != 200 {
		t.Fatal(code)
	}
	time.Sleep(l.GuestIdle + 500*time.Millisecond)
	reused := false
	req, _ := http.NewRequest("GET", "http://"+addr.String()+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
	resp, err := keep.Do(req)
	if err != nil || resp.StatusCode != 200 || !reused {
		t.Fatalf("the signed-in keep-alive after %s: %v %v reused=%v", l.GuestIdle, err, resp, reused)
	}
	_ = resp.Body.Close()
	// Every hoarder still open by then was closed (evicted or idle too long).
	open := 0
	for _, c := range hoard {
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil && isTimeout(err) {
			open++
		}
	}
	if open != 0 {
		t.Errorf("%d idle guests still open after %s", open, l.GuestIdle)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Half-sent bodies cannot hold the slots (the fourth attack's HIGH): 2,200
// connections from 16 addresses announced a 100,000-byte body, sent 8 bytes
// and then nothing. After its 408 (or 429, or 401) net/http went on reading
// the rest of the body without a deadline, the connection stayed active and
// was never evicted: every signed-in request on a new connection answered
// 503. Now every read of a body, its discard too, ends by BodyTimeout, a
// full guests' share makes room by closing the guest that has waited
// longest, idle or not, and a signed-in client is served every time.
func TestHalfSentBodiesCannotHoldSlots(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 2,200 connections")
	}
	api := newAPI(t, dbtest.NewSQLite(t), Options{BodyTimeout: time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, DefaultMaxConns, DefaultMaxConnsPerClient)
	srv := HTTPServer(api, time.Minute, time.Second, 5*time.Second)
	l.Attach(srv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	// Three doors a body can be left at: an API route without a key (the
	// body is received first), a public route that reads no body, and an
	// API route with a wrong key.
	heads := []string{
		"POST /v1/sessions/x/messages HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n",
		"POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n",
		"POST /v1/sessions/x/messages HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer wrong-key-0123456789\r\nContent-Length: 100000\r\n\r\n",
	}
	const attackers = 2200
	attack := make([]net.Conn, 0, attackers)
	t.Cleanup(func() {
		for _, c := range attack {
			_ = c.Close()
		}
	})
	for i := range attackers {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 1, byte(1+i%16))}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("attacker %d: %v", i, err)
		}
		attack = append(attack, c)
		_, _ = c.Write([]byte(heads[i%len(heads)] + "{\"messag"))
	}
	// A signed-in client on new connections, while the bodies hang.
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	served := 0
	const tries = 40
	for i := range tries {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v1/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-User-Id", "alice")
		resp, err := fresh.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				served++
			} else {
				t.Logf("signed-in request %d: %d", i, resp.StatusCode)
			}
		} else {
			t.Logf("signed-in request %d: %v", i, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
	if served != tries {
		t.Errorf("signed-in requests on new connections: %d of %d served beside %d half-sent bodies", served, tries, attackers)
	}
	// By the body timeout and a margin, every half-sent connection is
	// closed by the server (its answer, then EOF), none still waiting.
	time.Sleep(time.Second + 1500*time.Millisecond)
	open := 0
	for _, c := range attack {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		_, err := io.Copy(io.Discard, c)
		if err != nil && isTimeout(err) {
			open++
		}
	}
	if open != 0 {
		t.Errorf("%d of %d half-sent connections still open %s after the body timeout", open, attackers, 1500*time.Millisecond)
	}
}

// No one without a key can take the reading budget of those who have one:
// 8 keyless half-sent bodies from each of 8 addresses took every body slot
// (4 x MaxInFlight), and every signed-in store answered 429 "too many
// request bodies being received" until they timed out. The key is checked
// before a body is read: they get 401 at once, and their connections close.
func TestKeylessBodiesCannotTakeTheReadingBudget(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewSQLite(t), Options{MaxInFlight: 4, BodyTimeout: 5 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(ln, DefaultMaxConns, DefaultMaxConnsPerClient)
	srv := HTTPServer(api, time.Minute, 5*time.Second, 5*time.Second)
	l.Attach(srv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()
	var attack []net.Conn
	t.Cleanup(func() {
		for _, c := range attack {
			_ = c.Close()
		}
	})
	for i := range 64 {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 2, byte(1+i%8))}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		attack = append(attack, c)
		_, _ = c.Write([]byte("POST /v1/sessions/x/messages HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n[{\"role\""))
	}
	time.Sleep(200 * time.Millisecond) // every attacker's headers read
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for i := range 20 {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/sessions/mine/messages", strings.NewReader(`[{"role":"user","content":"hi"}]`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("X-User-Id", "alice")
		resp, err := fresh.Do(req)
		if err != nil {
			t.Fatalf("signed-in store %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("signed-in store %d beside 64 keyless half-sent bodies: %d %s", i, resp.StatusCode, b)
		}
	}
	// The keyless ones were answered 401 and closed, none kept waiting.
	for i, c := range attack {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		b, _ := io.ReadAll(c)
		if !strings.Contains(string(b), " 401 ") {
			t.Fatalf("keyless half-sent body %d: %.80q, want 401 and the connection closed", i, b)
		}
	}
}

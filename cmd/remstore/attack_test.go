package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
)

// The socket attacks of issue 26 (H2, H3) at small scale, against the
// binary on PostgreSQL. The attacker connects from 127.0.0.2, the tenant
// who must still be served from 127.0.0.1: both are loopback, so the
// per-client caps tell them apart as they would two hosts.

const attackKey = "attack-key-0123456789abcdef"

func attackBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "remstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// attackerConn dials the server from 127.0.0.2.
func attackerConn(t *testing.T, base string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatalf("attacker dial: %v", err)
	}
	return c
}

// served stores and loads as alice from 127.0.0.1; it fails the test
// unless both answer 2xx.
func served(t *testing.T, base, session string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/v1/sessions/" + session + "/messages", `[{"role":"user","content":"still served?"}]`},
		{"GET", "/v1/sessions/" + session + "/messages", ""},
		{"GET", "/healthz", ""},
	} {
		req, _ := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
		req.Header.Set("Authorization", "Bearer "+attackKey)
		req.Header.Set("X-User-Id", "alice")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s under attack: %v", r.method, r.path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s under attack: %d %s", r.method, r.path, resp.StatusCode, body)
		}
	}
}

// H2: connections that send headers and "[" then nothing. Before: they held
// every in-flight slot and everyone else got 429 for as long as the sockets
// stayed open. Now a slot is taken only once a body has arrived, one client
// may be sending only so many bodies at once, and a slow body ends in 408.
func TestSlowBodiesDoNotStarveOthers(t *testing.T) {
	t.Parallel()
	bin := attackBinary(t)
	cmd, base := startServe(t, bin, dbtest.NewPostgresURL(t), attackKey, "--max-in-flight", "4", "--body-timeout", "1s")
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	const slow = 16 // 4x the in-flight slots
	conns := make([]net.Conn, slow)
	for i := range conns {
		conns[i] = attackerConn(t, base)
		fmt.Fprintf(conns[i], "POST /v1/sessions/slow/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"+
			"X-User-Id: mallory\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[", attackKey)
	}
	time.Sleep(200 * time.Millisecond) // the bodies are now "arriving"
	served(t, base, "alice-slow")

	// Every slow sender gets an answer, none hangs: 408 once its body is
	// late, or 429 at once beyond what one client may send at a time.
	codes := map[int]int{}
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(15 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("a slow sender got no answer: %v", err)
		}
		codes[resp.StatusCode]++
		c.Close()
	}
	if codes[408] == 0 || codes[408]+codes[429] != slow {
		t.Fatalf("slow senders' answers %v; want 408s (and 429s), nothing else", codes)
	}
}

// H3: idle keep-alive connections, no key needed. Before: 20,000 of them
// used up the descriptors (accept4: too many open files) and /healthz timed
// out. Now connections beyond the per-client cap are answered 503 and
// closed at once, and idle ones close after --idle-timeout.
func TestIdleConnectionsAreCapped(t *testing.T) {
	t.Parallel()
	bin := attackBinary(t)
	cmd, base := startServe(t, bin, dbtest.NewPostgresURL(t), attackKey,
		"--max-conns", "128", "--max-conns-per-client", "32", "--idle-timeout", "1s")
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	fds := func() int {
		es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		if err != nil {
			return -1
		}
		return len(es)
	}
	before := fds()

	const idle = 400
	kept, refused := []net.Conn{}, 0
	for range idle {
		c := attackerConn(t, base)
		fmt.Fprint(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		switch {
		case err == nil && resp.StatusCode == 200:
			_, _ = io.Copy(io.Discard, resp.Body)
			kept = append(kept, c) // open and idle
		case err == nil && resp.StatusCode == 503, err != nil:
			refused++ // over the cap: 503, or reset before it could be read
			c.Close()
		}
	}
	if len(kept) > 32 || refused < idle-32 {
		t.Fatalf("%d idle connections kept, %d refused; the cap is 32 per client", len(kept), refused)
	}
	if n := fds(); before > 0 && n > before+32+8 {
		t.Fatalf("serve holds %d descriptors (%d before the attack)", n, before)
	}
	served(t, base, "alice-idle")

	// The idle ones are closed by the server after --idle-timeout.
	for _, c := range kept {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(make([]byte, 1)); err == nil || n > 0 {
			t.Fatalf("an idle connection stayed open (read %d, %v)", n, err)
		}
		c.Close()
	}
}

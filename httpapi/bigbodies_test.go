package httpapi

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
)

// Bodies over 1 MiB hold their bytes until their request ends: 4 x
// MaxBodyBytes in all, 2 x for one payer. Before, only the count of bodies
// being received was bounded (4 x MaxInFlight, 256 of up to 32 MiB by
// default), and 12 clients of one tenant posting 30 MB bodies took serve
// to 3.7 GB. Here (MaxBodyBytes 4 MiB): bob's two half-sent 3 MiB bodies
// hold 6 of his 8 MiB, his third is refused at once, and alice's 3 MiB
// store (known length and chunked) and her small ones still go through.
func TestBigBodiesHoldTheirBytes(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{MaxBodyBytes: 4 << 20, BodyTimeout: 10 * time.Second})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	const big = 3 << 20
	halfSent := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_, _ = c.Write([]byte("POST /v1/sessions/bobs/messages HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer " + key +
			"\r\nX-User-Id: bob\r\nContent-Type: application/json\r\nContent-Length: 3145728\r\n\r\n[{\"role\""))
		return c
	}
	halfSent()
	halfSent()
	for deadline := time.Now().Add(5 * time.Second); s.bigBodies.used() < 2*big; {
		if time.Now().After(deadline) {
			t.Fatalf("bob's two bodies hold %d bytes, want %d", s.bigBodies.used(), 2*big)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Bob's third: refused at once, its body unread.
	third := halfSent()
	_ = third.SetReadDeadline(time.Now().Add(2 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(third), nil)
	if err != nil {
		t.Fatalf("bob's third big body: %v, want 429 at once", err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "large request bodies") {
		t.Fatalf("bob's third big body: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	body := `[{"role":"user","content":"` + strings.Repeat("a", big-40) + `"}]`
	c := &http.Client{Timeout: 20 * time.Second}
	for _, tc := range []struct {
		name   string
		body   io.Reader
		length int64
	}{
		{"3 MiB", strings.NewReader(body), int64(len(body))},
		{"3 MiB chunked", io.MultiReader(strings.NewReader(body)), -1},
		{"small", strings.NewReader(`[{"role":"user","content":"hi"}]`), 32},
	} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/sessions/alices/messages", tc.body)
		req.ContentLength = tc.length
		req.Header.Set("Authorization", "Bearer alice-only-0123456789")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("alice's %s store beside bob's big bodies: %d %.200s", tc.name, resp.StatusCode, b)
		}
	}
	if got := s.bigBodies.used(); got != 2*big {
		t.Errorf("after alice's stores %d bytes held, want bob's %d (hers given back)", got, 2*big)
	}
}

// used is what the budget holds now (a sender is mid-body).
func (b *budget) used() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

package httpapi

import (
	"bytes"
	"crypto/tls"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
)

// TLS ended by a proxy counts only when the proxy is trusted: then HSTS is
// sent, the viewer's cookies are Secure, and the client named in
// X-Forwarded-For is the one logged and limited. From any other address the
// same headers change nothing.
func TestTrustedProxy(t *testing.T) {
	t.Parallel()
	proxies, err := ParseTrustedProxies([]string{"10.0.0.0/8", "loopback"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	s := newAPI(t, dbtest.NewSQLite(t), Options{UI: true, TrustedProxies: proxies})
	s.o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	for _, c := range []struct {
		name, remote, proto, xff string
		tls                      bool
		secure                   bool
		client                   string
	}{
		{"trusted proxy, https", "10.1.2.3:5555", "https", "198.51.100.7", false, true, "198.51.100.7"},
		{"trusted proxy, chain of proxies", "10.1.2.3:5555", "https", "203.0.113.9, 198.51.100.7, 10.9.9.9", false, true, "198.51.100.7"},
		{"trusted proxy, http", "10.1.2.3:5555", "http", "198.51.100.7", false, false, "198.51.100.7"},
		{"loopback proxy", "127.0.0.1:5555", "HTTPS", "198.51.100.8", false, true, "198.51.100.8"},
		{"untrusted client forging both headers", "192.0.2.1:5555", "https", "10.0.0.1", false, false, "192.0.2.1"},
		{"trusted proxy, malformed hop", "10.1.2.3:5555", "https", "x, 10.2.2.2", false, true, "10.2.2.2"},
		{"own TLS", "192.0.2.2:5555", "", "", true, true, "192.0.2.2"},
	} {
		logs.Reset()
		r := httptest.NewRequest("GET", "/ui/login", nil)
		r.RemoteAddr = c.remote
		if c.proto != "" {
			r.Header.Set("X-Forwarded-Proto", c.proto)
		}
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if c.tls {
			r.TLS = &tls.ConnectionState{}
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		hsts := w.Header().Get("Strict-Transport-Security")
		cookie := strings.Join(w.Header().Values("Set-Cookie"), "\n")
		if w.Code != http.StatusOK || cookie == "" {
			t.Fatalf("%s: %d, no cookie", c.name, w.Code)
		}
		if (hsts == HSTS) != c.secure || strings.Contains(cookie, "; Secure") != c.secure {
			t.Errorf("%s: HSTS %q, cookie %q; want secure=%v", c.name, hsts, cookie, c.secure)
		}
		if !strings.Contains(logs.String(), "client="+c.client) {
			t.Errorf("%s: log %q does not name client %s", c.name, logs.String(), c.client)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "1.2.3"} {
		if _, err := ParseTrustedProxies([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

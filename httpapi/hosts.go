package httpapi

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// loopbackHosts are the names a server bound to a loopback address answers
// to without being told more.
var loopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// AllowedHosts is the Host allow-list of a server bound to addr with the
// extra names given (--allowed-host): on a loopback address the loopback
// names and the extra ones; elsewhere the bound address and the extra ones,
// or nil (no check) for an unspecified address (0.0.0.0, ::) without extra
// names, where the names clients use cannot be known.
func AllowedHosts(addr string, extra []string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	var out []string
	for _, e := range extra {
		for _, h := range strings.Split(e, ",") {
			if h = strings.TrimSpace(h); h != "" {
				out = append(out, h)
			}
		}
	}
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || ip != nil && ip.IsLoopback():
		out = append(out, loopbackHosts...)
		out = append(out, host)
	case host == "" || ip != nil && ip.IsUnspecified():
		if len(out) == 0 {
			return nil
		}
	default:
		out = append(out, host)
	}
	return out
}

// hostAllowed reports whether hostport (a Host header, or an origin's
// host) names this server: its host part is on the list (ports are not
// compared: a rebinding page reaches the same port anyway).
func (s *Server) hostAllowed(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.Trim(h, "[]"), ".")
	for _, a := range s.o.AllowedHosts {
		if strings.EqualFold(h, strings.Trim(a, "[]")) {
			return true
		}
	}
	return false
}

// guardHosts refuses, before anything else runs, a request whose Host is not
// this server's (DNS rebinding: a page of another site whose name now points
// here), and a state-changing request whose Origin, or Referer without one,
// is another site's. Clients that send neither (curl, SDKs) are not
// browsers and pass; browsers send Origin on every POST.
func (s *Server) guardHosts(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(s.o.AllowedHosts) > 0 && !s.hostAllowed(r.Host) {
			s.o.Logger.Warn("refused host", "host", r.Host, "client", clientOf(r), "path", r.URL.Path)
			writeError(w, http.StatusMisdirectedRequest, "host_not_allowed",
				"this server does not answer to the host name in the request (add it with --allowed-host)", "Host")
			return
		}
		// The public name a trusted proxy passes on is the name the browser
		// asked for: a rebound name arrives there, not in Host (issue 42,
		// low: behind the documented nginx setup it passed).
		if ph := s.publicHost(r); ph != r.Host && len(s.o.AllowedHosts) > 0 && !s.hostAllowed(ph) {
			s.o.Logger.Warn("refused forwarded host", "host", ph, "client", clientOf(r), "path", r.URL.Path)
			writeError(w, http.StatusMisdirectedRequest, "host_not_allowed",
				"this server does not answer to the host name the proxy passed on (add it with --allowed-host)", "X-Forwarded-Host")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
		default:
			if from, ok := originOf(r); ok && !s.sameSite(from, s.publicHost(r)) {
				s.o.Logger.Warn("refused cross-site request", "origin", from, "client", clientOf(r), "path", r.URL.Path)
				writeError(w, http.StatusForbidden, "cross_site_request", "requests from another site are refused", "Origin")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// originOf is the host of the request's Origin (or, without one, of its
// Referer); ok is false when the request carries neither. An opaque origin
// ("null") is a host that matches nothing.
func originOf(r *http.Request) (string, bool) {
	raw := r.Header.Get("Origin")
	if raw == "" {
		raw = r.Header.Get("Referer")
	}
	if raw == "" {
		return "", false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "\x00" + raw, true
	}
	return u.Host, true
}

// sameSite: the origin is the host the client asked for, or on the
// allow-list when there is one. A loopback origin must name the port the
// client asked for too: another port of the same machine is another site
// (a local web app on localhost:3000 posting to serve on :8088).
func (s *Server) sameSite(origin, host string) bool {
	if strings.EqualFold(origin, host) {
		return true
	}
	if len(s.o.AllowedHosts) == 0 || !s.hostAllowed(origin) {
		return false
	}
	return !isLoopbackName(origin) || portOf(origin) == portOf(host)
}

// isLoopbackName says hostport names this machine's loopback.
func isLoopbackName(hostport string) bool {
	h := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	ip := net.ParseIP(h)
	return strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") || ip != nil && ip.IsLoopback()
}

// portOf is hostport's port, "" when it names none.
func portOf(hostport string) string {
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		return p
	}
	return ""
}

// publicHost is the host the client asked for: the Host header, or the
// X-Forwarded-Host a trusted proxy passes on.
func (s *Server) publicHost(r *http.Request) string {
	if fh := r.Header.Get("X-Forwarded-Host"); fh != "" && s.trusted(peerAddr(r)) {
		h, _, _ := strings.Cut(fh, ",")
		return strings.TrimSpace(h)
	}
	return r.Host
}

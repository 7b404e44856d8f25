package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/remstore/remstore/viewer"
)

// HSTS is the Strict-Transport-Security value sent on every response that
// reached the server over TLS (its own, or a trusted proxy's).
const HSTS = "max-age=31536000"

// ParseTrustedProxies reads --trusted-proxy values: addresses or CIDR
// prefixes ("10.0.0.0/8", "::1"), or "loopback" for 127.0.0.0/8 and ::1.
func ParseTrustedProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range list {
		for _, v := range strings.Split(item, ",") {
			v = strings.TrimSpace(v)
			switch {
			case v == "":
				continue
			case v == "loopback":
				out = append(out, netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"))
			case strings.Contains(v, "/"):
				p, err := netip.ParsePrefix(v)
				if err != nil {
					return nil, fmt.Errorf("%q is not an address or CIDR prefix", v)
				}
				out = append(out, p.Masked())
			default:
				a, err := netip.ParseAddr(v)
				if err != nil {
					return nil, fmt.Errorf("%q is not an address or CIDR prefix", v)
				}
				out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			}
		}
	}
	return out, nil
}

// trusted reports whether addr (an IP, no port) is one of the proxies.
func (s *Server) trusted(addr string) bool {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, p := range s.o.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peerAddr is the connection's IP address.
func peerAddr(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// clientAddr is the address limits and logs use: the connection's, or,
// when the connection comes from a trusted proxy, the last address in
// X-Forwarded-For that is not itself a trusted proxy (a client can prepend
// anything to that header, but not what its proxies append).
func (s *Server) clientAddr(r *http.Request) string {
	peer := peerAddr(r)
	if !s.trusted(peer) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		h := strings.TrimSpace(hops[i])
		a, err := netip.ParseAddr(h)
		if err != nil {
			break // a malformed hop: trust nothing left of it
		}
		if !s.trusted(a.Unmap().String()) {
			return a.Unmap().String()
		}
		peer = a.Unmap().String()
	}
	return peer
}

// secure reports whether the client reached the server over TLS: this
// server's own, or a trusted proxy's that says so in X-Forwarded-Proto.
func (s *Server) secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	if !s.trusted(peerAddr(r)) {
		return false
	}
	proto, _, _ := strings.Cut(r.Header.Get("X-Forwarded-Proto"), ",")
	return strings.EqualFold(strings.TrimSpace(proto), "https")
}

// withClient records the client address in info and, over TLS, sends
// HSTS and tells the viewer its cookies may be Secure.
func (s *Server) withClient(w http.ResponseWriter, r *http.Request, info *reqInfo) *http.Request {
	info.client = s.clientAddr(r)
	if s.secure(r) {
		w.Header().Set("Strict-Transport-Security", HSTS)
		r = viewer.MarkSecure(r)
	}
	return r
}

// clientOf is the address withClient recorded (the Python service's without it).
func clientOf(r *http.Request) string {
	if c := infoOf(r).client; c != "" {
		return c
	}
	return peerAddr(r)
}

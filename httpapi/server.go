package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/internal/query"
	"github.com/remstore/remstore/internal/signin"
	"github.com/remstore/remstore/internal/version"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/viewer"
)

//go:embed openapi.json
var openAPISource []byte

// OpenAPI is the API's OpenAPI document, its info.version the build's
// (version.String, as /healthz, MCP's initialize and --version say): the
// file holds a placeholder, and a document that said "1" whatever ran
// told a client nothing.
var OpenAPI = bytes.Replace(openAPISource, []byte(`"version": "0.0.0-placeholder"`),
	[]byte(`"version": `+strconv.Quote(version.String())), 1)

// Defaults of Options.
const (
	DefaultMaxBodyBytes   = 32 << 20
	DefaultRequestTimeout = 30 * time.Second
	DefaultMaxInFlight    = 64
	DefaultBodyTimeout    = 10 * time.Second
	// DefaultMaxReadingPerClient bounds the bodies one client address may
	// be sending at once: a single host cannot hold the reading budget.
	DefaultMaxReadingPerClient = 8
	// A search reads text across a tenant's sessions; its budget is its
	// own, apart from stores and loads: at most DefaultMaxSearches at once,
	// one per user, each within DefaultSearchTimeout, and a user's searches
	// a fifth of the time at most, with a quarter second of credit
	// (searchGate).
	DefaultMaxSearches   = 4
	DefaultSearchTimeout = 5 * time.Second
	DefaultUserID        = "anonymous"
	UserHeader           = "X-Remstore-User" // the user a request acted for
	DefaultTenantID      = "default"
)

// APIKey is an accepted bearer token; with UserID set it may act only for that user.
type APIKey struct {
	Key    string
	UserID string
}

// ParseAPIKeys reads "key1,key2=alice": comma- or newline-separated keys,
// each optionally bound to a user id. A key is bound when the text after its
// last "=" is a user id (letters, digits and . _ @ -); otherwise the whole
// text is the key, so base64 keys ending in "=" padding stay whole
// ("c2VjcmV0LWtleS0xMjM0NQ==" is a key; "c2VjcmV0LWtleS0xMjM0NQ===alice" is
// that key bound to alice).
func ParseAPIKeys(s string) ([]APIKey, error) {
	var out []APIKey
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		part = strings.TrimSpace(part)
		if part == "" || strings.HasPrefix(part, "#") {
			continue
		}
		k, u := part, ""
		if i := strings.LastIndexByte(part, '='); i >= 0 && userIDPattern.MatchString(part[i+1:]) {
			k, u = part[:i], part[i+1:]
		}
		if len(k) < 16 {
			return nil, errors.New("API keys must be at least 16 characters")
		}
		out = append(out, APIKey{Key: k, UserID: u})
	}
	return out, nil
}

var userIDPattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,256}$`)

// bearer reads "Authorization: Bearer <token>"; the scheme is
// case-insensitive (RFC 9110 §11.1).
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

// Options configures the API.
type Options struct {
	// Stores are the tenants' stores, built once from settings
	// (sessionstore.FromSettings) on a migrated database; required. The API
	// and the viewer take every store from them.
	Stores  *sessionstore.Stores
	APIKeys []APIKey
	// Insecure serves without API keys; the serve command allows it only on loopback.
	Insecure bool
	// MaxBodyBytes bounds a request body (413 above); 0 =
	// DefaultMaxBodyBytes. Bodies over 1 MiB hold their bytes until their
	// request ends, 4 x MaxBodyBytes in all and 2 x for one payer (429
	// beyond): big posts cannot fill the server's memory.
	MaxBodyBytes   int64
	RequestTimeout time.Duration // 0 = DefaultRequestTimeout
	// MaxInFlight is the requests served at once (429 beyond), three
	// quarters of them at most for one caller (an API key not bound to a
	// user, or the user); 0 = DefaultMaxInFlight.
	MaxInFlight int
	// BodyTimeout is how long a request body may take to arrive (408 after);
	// 0 = DefaultBodyTimeout. Bodies are read before a request takes one of
	// the MaxInFlight slots, within a reading budget of 4 x MaxInFlight
	// bodies, MaxReadingPerClient (0 = DefaultMaxReadingPerClient) per
	// client address: slow senders cannot hold the slots others need.
	BodyTimeout         time.Duration
	MaxReadingPerClient int
	// MaxSearches bounds the searches running at once, one per user (429
	// beyond, at once); SearchTimeout bounds each (503 timeout). 0 = the
	// defaults.
	MaxSearches   int
	SearchTimeout time.Duration
	Logger        *slog.Logger // nil = slog.Default()
	Registry      *prometheus.Registry
	// AuditEnabled and AuditDir are DEBUG_AUDIT_SESSION and DEBUG_AUDIT_DIR
	// (settings): pydantic-ai loads are recorded there when enabled.
	AuditEnabled bool
	AuditDir     string
	// UI serves the read-only viewer (package viewer) under /ui/: a browser
	// signs in with the same API keys and sees only its user's sessions.
	UI bool
	// TrustedProxies are the addresses of proxies that end TLS in front of
	// the server (ParseTrustedProxies): from them, X-Forwarded-Proto: https
	// counts as TLS (HSTS, Secure cookies) and X-Forwarded-For names the
	// client for limits and logs. From anyone else both headers are ignored.
	TrustedProxies []netip.Prefix
	// TracerProvider receives a span per request (and the stores' spans
	// beneath it when Stores were built with the same provider, as serve
	// does through the global one); nil means OpenTelemetry's global
	// provider, which records nothing until set. A request's W3C
	// traceparent header continues the caller's trace.
	TracerProvider trace.TracerProvider
	// TraceURL links each message's trace in the viewer to the user's
	// tracing system ({trace_id}, {span_id}: viewer.Options.TraceURL).
	TraceURL string
	// AllowedHosts are the host names the server answers to (AllowedHosts
	// builds the list serve uses); nil answers any. A request naming
	// another host gets 421, a state-changing request from another
	// site's page 403, on every route (guardHosts).
	AllowedHosts []string
}

// Server is the HTTP API.
type Server struct {
	o       Options
	mux     *http.ServeMux
	handler http.Handler
	// inflight is MaxInFlight slots, three quarters at most for one payer
	// (inflightShare): one tenant's 16 slow audit pages held every slot of
	// --max-in-flight 16, and the other's stores met 429 91 times of 92.
	inflight *budget
	reading  *budget // bodies being received, of requests with a valid key
	// guestReading is the viewer's (its sign-in form, its signed-in
	// browsers' posts): apart, so that no one without a key can take the
	// budget of those who have one.
	guestReading *budget
	// bigBodies holds the bytes of bodies over bigBodyBytes from their
	// first byte to the end of their request (their parses are a few
	// times their size): 4 x MaxBodyBytes in all, half of it for one
	// payer. 12 clients posting 30 MB bodies took serve to 3.7 GB when
	// only the count of bodies being received was bounded.
	bigBodies *budget
	searches  *searchGate
	guesses   *signin.Limiter // wrong bearer keys, by client network
	keys      []hashedKey
	m         metrics
	tracer    trace.Tracer
}

type hashedKey struct {
	sum    [32]byte
	userID string
}

type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ops      *prometheus.HistogramVec
}

// New builds the API.
func New(o Options) (*Server, error) {
	if o.Stores == nil {
		return nil, errors.New("httpapi: Options.Stores is required")
	}
	if len(o.APIKeys) == 0 && !o.Insecure {
		return nil, errors.New("httpapi: no API keys (set REMSTORE_API_KEYS) and not insecure")
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.RequestTimeout == 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.MaxInFlight == 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.BodyTimeout == 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.MaxReadingPerClient == 0 {
		o.MaxReadingPerClient = DefaultMaxReadingPerClient
	}
	if o.MaxSearches == 0 {
		o.MaxSearches = DefaultMaxSearches
	}
	if o.SearchTimeout == 0 {
		o.SearchTimeout = DefaultSearchTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	s := &Server{o: o, mux: http.NewServeMux(), inflight: newBudget(o.MaxInFlight, inflightShare(o.MaxInFlight)),
		reading: newBudget(4*o.MaxInFlight, o.MaxReadingPerClient), guestReading: newBudget(o.MaxInFlight, o.MaxReadingPerClient),
		bigBodies: newBudget(int(min(4*o.MaxBodyBytes, 1<<50)), int(min(2*o.MaxBodyBytes, 1<<49))), searches: newSearchGate(o.MaxSearches), guesses: signin.New(nil)}
	for _, k := range o.APIKeys {
		s.keys = append(s.keys, hashedKey{sha256.Sum256([]byte(k.Key)), k.UserID})
	}
	tp := o.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	s.tracer = tp.Tracer("github.com/remstore/remstore/httpapi")
	s.m = metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "remstore_http_requests_total", Help: "HTTP requests by route and status."}, []string{"method", "route", "code"}),
		latency:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "remstore_http_request_duration_seconds", Help: "HTTP request latency.", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}, []string{"method", "route"}),
		ops:      prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "remstore_operation_duration_seconds", Help: "Store, load and lookup durations.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18)}, []string{"op"}),
	}
	o.Registry.MustRegister(s.m.requests, s.m.latency, s.m.ops, collectors.NewDBStatsCollector(o.Stores.DB().DB.DB, "remstore"))
	if pool := o.Stores.DB().Pool; pool != nil {
		o.Registry.MustRegister(poolCollectors(pool, "main")...)
	}
	if pool := o.Stores.DB().LoadPool; pool != nil {
		o.Registry.MustRegister(poolCollectors(pool, "loads")...)
	}
	s.routes()
	if o.UI {
		v, err := viewer.New(viewer.Options{
			NewStore: func(user string) (viewer.Store, error) { return o.Stores.For(user) },
			SignIn: func(key, user string) (string, string, error) {
				u, budget, aerr := s.resolveUser(key, key != "", user)
				if aerr != nil {
					return "", "", aerr
				}
				return u, budget, nil
			},
			KeyOptional: o.Insecure, ClientAddr: clientOf, AuditDir: o.AuditDir, TruncateLength: o.Stores.TruncateLength(), Logger: o.Logger,
			BeginSearch: s.beginSearch, TraceURL: o.TraceURL,
		})
		if err != nil {
			return nil, err
		}
		// The root and the browser's icon request lead to the viewer.
		s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		})
		s.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/svg+xml")
			w.Header().Set("Cache-Control", "public, max-age=86400")
			_, _ = w.Write(viewer.Favicon)
		})
		s.mux.HandleFunc("/ui/", func(w http.ResponseWriter, r *http.Request) {
			infoOf(r).route = "/ui/"
			v.ServeHTTP(w, r)
		})
	}
	s.handler = s.observe(s.bound(s.recover(s.guardHosts(s.auth(s.limit(routeErrors(s.mux)))))))
	return s, nil
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Routes lists every "METHOD /path" the API serves (the OpenAPI test uses it).
var routes = []string{
	"POST /v1/sessions/{id}/messages", "POST /v1/messages", "GET /v1/sessions/{id}/messages", "GET /v1/lookup", "GET /v1/search",
	"GET /v1/sessions", "GET /v1/sessions/{id}", "PATCH /v1/sessions/{id}", "DELETE /v1/sessions/{id}",
	"POST /v1/sessions/{id}/fork", "POST /v1/sessions/{id}/cancel", "POST /v1/sessions/{id}/audit",
	"DELETE /v1/sessions/{id}/messages/last", "DELETE /v1/sessions/{id}/messages",
	"GET /healthz", "GET /readyz", "GET /metrics", "GET /openapi.json",
}

// Routes lists the API's routes ("METHOD /path"), as the OpenAPI document
// and the reference name them.
func Routes() []string { return slices.Clone(routes) }

func (s *Server) routes() {
	h := map[string]http.HandlerFunc{
		"POST /v1/sessions/{id}/messages":        s.withStore(s.postMessages),
		"POST /v1/messages":                      s.withStore(s.postMessages),
		"GET /v1/sessions/{id}/messages":         s.withStore(s.getMessages),
		"GET /v1/lookup":                         s.withStore(s.lookup),
		"GET /v1/search":                         s.withStore(s.search),
		"GET /v1/sessions":                       s.withStore(s.listSessions),
		"GET /v1/sessions/{id}":                  s.withStore(s.getSession),
		"PATCH /v1/sessions/{id}":                s.withStore(s.patchSession),
		"DELETE /v1/sessions/{id}":               s.withStore(s.deleteSession),
		"POST /v1/sessions/{id}/fork":            s.withStore(s.forkSession),
		"POST /v1/sessions/{id}/cancel":          s.withStore(s.cancelSession),
		"POST /v1/sessions/{id}/audit":           s.withStore(s.postAudit),
		"DELETE /v1/sessions/{id}/messages/last": s.withStore(s.popMessage),
		"DELETE /v1/sessions/{id}/messages":      s.withStore(s.clearMessages),
		"GET /healthz": func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "version": version.String()})
		},
		"GET /readyz":  s.readyz,
		"GET /metrics": promhttp.HandlerFor(s.o.Registry, promhttp.HandlerOpts{}).ServeHTTP,
		"GET /openapi.json": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(OpenAPI)
		},
	}
	for _, route := range routes {
		handler := h[route]
		s.mux.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) {
			infoOf(r).route = route // the mux's r.Pattern stays on its copy
			handler(w, r)
		})
	}
}

// public routes need no API key and do not count against the in-flight cap.
func public(path string) bool {
	switch path {
	case "/healthz", "/readyz", "/metrics", "/openapi.json":
		return true
	}
	return false
}

// --- middleware ---

// routeErrors answers a path no route serves, or a method its route does not
// take, in the API's JSON error shape: ServeMux's own answer is plain text,
// which a client parsing {"error": ...} cannot read.
func routeErrors(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{header: http.Header{}}
		h.ServeHTTP(rec, r)
		switch rec.code {
		case http.StatusNotFound:
			writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no route %s %s (the routes are listed at /openapi.json)", r.Method, r.URL.Path), "")
		case http.StatusMethodNotAllowed:
			allow := rec.header.Get("Allow")
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s; allowed: %s", r.Method, r.URL.Path, allow), "")
		default: // a redirect to the path with or without its slash
			mux.ServeHTTP(w, r)
		}
	})
}

// statusRecorder keeps the status and headers a handler writes, and drops
// its body.
type statusRecorder struct {
	header http.Header
	code   int
}

func (s *statusRecorder) Header() http.Header         { return s.header }
func (s *statusRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (s *statusRecorder) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}

// reqInfo is what the layers learn about a request, kept in one context
// value that observe adds and the others fill in place: the request id,
// the route pattern the mux matched (for the metrics' label; the mux sets
// r.Pattern on its own copy of the request), the user auth resolved and
// the client address. One value, not one context and request copy per fact:
// those were a tenth of serve's allocations per store.
type reqInfo struct {
	id, route, user, client string
	budget                  string // who pays for its searches (resolveUser)
	received                bool   // the whole body arrived (receive)
}

type ctxKey struct{}

// infoOf is the request's reqInfo; a blank one outside observe.
func infoOf(r *http.Request) *reqInfo {
	if i, ok := r.Context().Value(ctxKey{}).(*reqInfo); ok {
		return i
	}
	return &reqInfo{}
}

// userOf is the user auth resolved for the request ("" before auth).
func userOf(r *http.Request) string { return infoOf(r).user }

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (read
// deadlines for bodies, flushing).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// observe assigns the request id and records the access log and metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if id == "" || len(id) > 128 {
			b := make([]byte, 8)
			_, _ = rand.Read(b)
			id = hex.EncodeToString(b)
		}
		w.Header().Set("X-Request-Id", id)
		info := &reqInfo{id: id, route: "unmatched"}
		ctx, span := s.tracer.Start(traceContext.Extract(r.Context(), propagation.HeaderCarrier(r.Header)), r.Method,
			trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
		r = s.withClient(w, r.WithContext(context.WithValue(ctx, ctxKey{}, info)), info)
		sw := &statusWriter{ResponseWriter: w}
		defer func() { endRequestSpan(span, r.Method, info, sw.code) }() // a panic too (ErrAbortHandler)
		next.ServeHTTP(sw, r)
		code := sw.code
		if code == 0 {
			code = http.StatusOK
		}
		d := time.Since(start)
		s.m.requests.WithLabelValues(r.Method, info.route, strconv.Itoa(code)).Inc()
		s.m.latency.WithLabelValues(r.Method, info.route).Observe(d.Seconds())
		// Typed attributes: the variadic form boxes each value.
		s.o.Logger.LogAttrs(r.Context(), slog.LevelInfo, "request", slog.String("id", id), slog.String("method", r.Method),
			slog.String("path", r.URL.Path), slog.String("route", info.route),
			slog.Int("status", code), slog.Float64("duration_ms", float64(d.Microseconds())/1000),
			// The store's tenant is the user (isolation is by user, as in the
			// peer); X-Tenant-Id is only recorded.
			slog.String("user", info.user), slog.String("x_tenant_id", tenantOf(r)), slog.String("client", info.client))
	})
}

// traceContext reads a caller's W3C traceparent, whatever the global
// propagator is (OpenTelemetry's default propagates nothing).
var traceContext = propagation.TraceContext{}

// endRequestSpan names the request's span by its route (known only after
// the mux matched it) and ends it with the user and the status.
func endRequestSpan(span trace.Span, method string, info *reqInfo, code int) {
	if !span.IsRecording() { // tracing off: nothing to name or set
		span.End()
		return
	}
	if code == 0 {
		code = http.StatusOK
	}
	route := info.route // the mux's pattern: "GET /v1/..." or a path alone
	if _, path, ok := strings.Cut(route, " "); ok {
		route = path
	}
	span.SetName(method + " " + route)
	span.SetAttributes(attribute.String("http.request.method", method), attribute.String("http.route", route),
		attribute.Int("http.response.status_code", code), attribute.String("enduser.id", info.user),
		attribute.String("remstore.request_id", info.id))
	if code >= 500 {
		span.SetStatus(codes.Error, http.StatusText(code))
	}
	span.End()
}

// tenantOf is X-Tenant-Id as the Python service's API sends it, default "default".
func tenantOf(r *http.Request) string {
	if t := r.Header.Get("X-Tenant-Id"); t != "" && len(t) <= 256 {
		return t
	}
	return DefaultTenantID
}

func (s *Server) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.o.Logger.Error("panic", "id", infoOf(r).id, "panic", fmt.Sprint(v))
				writeError(w, http.StatusInternalServerError, "internal", "internal error", "")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// bound puts every read of a request body under BodyTimeout, whoever
// answers: a refusal written before the body was read (a wrong host, a
// public route, 429 over the reading budget, 408) left net/http to read
// and discard the rest of it after the answer, and it did so without a
// deadline, so a client that announced a body and sent 8 bytes held its
// connection, active and never evicted, for good. A body not received in
// full has its connection closed after the answer, at once: the deadline
// is moved to now, so the discard ends on its first read.
func (s *Server) bound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(s.o.BodyTimeout)) // unsupported under httptest: no deadline there
		// Until receive has the whole body: the connection ends after the
		// answer (nothing after an unread body can be read as a request).
		w.Header().Set("Connection", "close")
		info := infoOf(r)
		defer func() {
			if !info.received {
				_ = rc.SetReadDeadline(time.Now())
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limit receives the body (within BodyTimeout and the reading budget),
// then takes one of MaxInFlight slots (429 with Retry-After when none is
// free) and applies the request timeout. A slot is held only by a request
// whose body has arrived, so clients that send slowly, or not at all,
// cannot keep others out.
func (s *Server) limit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
		if !public(r.URL.Path) {
			if r.ContentLength != 0 {
				release, ok := s.receive(w, r)
				if !ok {
					return
				}
				defer release()
			}
			payer := payerOf(r)
			if !s.inflight.take(payer) {
				w.Header().Set("Retry-After", "1")
				msg := fmt.Sprintf("more than %d requests in flight", s.o.MaxInFlight)
				if share := inflightShare(s.o.MaxInFlight); s.inflight.held(payer) >= share {
					msg = fmt.Sprintf("your requests hold %d of the %d in flight, the most one caller may (an API key not bound to a user, or the user)", share, s.o.MaxInFlight)
				}
				writeError(w, http.StatusTooManyRequests, "too_many_requests", msg, "")
				return
			}
			defer s.inflight.give(payer)
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.o.RequestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// inflightShare is the most of max slots one payer may hold: three
// quarters, so that a quarter is always another's (one at least).
func inflightShare(max int) int { return max - max/4 }

// payerOf is who a request is charged to (the search budget's payer: an
// API key not bound to a user, or the user); the viewer's requests without
// a key, their client network.
func payerOf(r *http.Request) string {
	if b := infoOf(r).budget; b != "" {
		return b
	}
	return "guest " + signin.Network(clientOf(r))
}

// auditContext is r's context for the audit files: its payer waits for
// its own turn at a big dump's parse (audit.WithReader), not in front of
// everyone else's. Set where the files are read, not on every request.
func auditContext(r *http.Request) context.Context {
	return audit.WithReader(r.Context(), payerOf(r))
}

// bigBodyBytes is where a body starts to hold its bytes of bigBodies:
// stores and loads of agents' turns stay below it and never wait on
// another tenant's big posts.
const bigBodyBytes = 1 << 20

// receive reads the whole body into memory within BodyTimeout and puts it
// back as r.Body, and returns what gives back its bytes of bigBodies (at
// the end of the request); false when it answered instead (429 over the
// reading budget or the big bodies' bytes, 408 too slow, 413 too large,
// 400 broken).
func (s *Server) receive(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	client := signin.Network(clientOf(r)) // an IPv6 /64 is one client
	// The key is checked before a body is read (auth runs first): a
	// caller without one is answered 401 and its connection closed, and
	// cannot hold the reading budget (8 keyless half-sent bodies from each
	// of 8 addresses refused every signed-in store 429 until they timed
	// out). Requests auth lets through without a user are the viewer's.
	reading := s.reading
	if infoOf(r).user == "" {
		reading = s.guestReading
	}
	busy := func(what string) (func(), bool) {
		// The connection closes after the answer (bound): its body is unread.
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "too_many_requests", what, "")
		return nil, false
	}
	if !reading.take(client) {
		return busy("too many request bodies being received")
	}
	defer reading.give(client)
	// A big body holds its bytes until its request ends, charged to
	// whoever pays for the caller's searches (the viewer's guests: their
	// network).
	payer, held := payerOf(r), 0
	release = func() {}
	hold := func(n int64) bool {
		if !s.bigBodies.takeN(payer, int(n)) {
			return false
		}
		held = int(n)
		release = func() { s.bigBodies.giveN(payer, held) }
		return true
	}
	const bigBusy = "too many large request bodies at once (over 1 MiB each; yours or everyone's)"
	if r.ContentLength > bigBodyBytes && !hold(min(r.ContentLength, s.o.MaxBodyBytes)) {
		return busy(bigBusy)
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(s.o.BodyTimeout)) // unsupported under httptest: no deadline there
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength < s.o.MaxBodyBytes {
		// ReadFrom grows the buffer again unless bytes.MinRead is free
		// when the body ends (it was 2 allocations of the body a request).
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	var err error
	if r.ContentLength < 0 {
		// Length unknown (chunked): its first MiB is free, and past it the
		// body holds the most it may be.
		if _, err = buf.ReadFrom(io.LimitReader(r.Body, bigBodyBytes+1)); err == nil && buf.Len() > bigBodyBytes {
			if !hold(s.o.MaxBodyBytes) {
				return busy(bigBusy)
			}
			_, err = buf.ReadFrom(r.Body)
		}
	} else {
		_, err = buf.ReadFrom(r.Body)
	}
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		// The whole body is in: no deadline while the handler works (an
		// expired one would end the request: net/http's background read
		// of the connection cancels its context), and the connection may
		// be kept.
		_ = rc.SetReadDeadline(time.Time{})
		w.Header().Del("Connection")
		infoOf(r).received = true
		r.Body = &received{Reader: bytes.NewReader(buf.Bytes()), b: buf.Bytes()}
		return release, true
	case errors.As(err, &mbe):
		s.fail(w, r, err)
	case errors.As(err, &ne) && ne.Timeout():
		writeError(w, http.StatusRequestTimeout, "request_timeout", fmt.Sprintf("the request body did not arrive within %s", s.o.BodyTimeout), "body")
	default:
		writeError(w, http.StatusBadRequest, "bad_input", "reading the request body: "+err.Error(), "body")
	}
	release()
	return nil, false
}

// received is a body limit read in full: handlers take its bytes as they
// are (readBody) instead of copying them again.
type received struct {
	*bytes.Reader
	b []byte
}

func (*received) Close() error { return nil }

// readBody is the whole request body.
func readBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Body.(*received); ok {
		return b.b, nil
	}
	return io.ReadAll(r.Body)
}

// onceHeaders are the headers a request may carry once at most.
var onceHeaders = []string{"Authorization", "X-User-Id", "X-Session-Id", "Idempotency-Key", ExpectLastHeader}

// auth checks the bearer key (constant time, over hashes so the length of a
// key leaks nothing) and resolves the user the request acts for.
func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The viewer signs browsers in with its own cookie (package viewer).
		if public(r.URL.Path) || (s.o.UI && (strings.HasPrefix(r.URL.Path, "/ui/") || r.URL.Path == "/" || r.URL.Path == "/favicon.ico")) {
			next.ServeHTTP(w, r)
			return
		}
		// A header that says who acts, where, or which write this is,
		// given twice: the first won without a word (two X-User-Ids of
		// bob and alice acted as bob).
		for _, h := range onceHeaders {
			if len(r.Header.Values(h)) > 1 {
				writeError(w, http.StatusBadRequest, "invalid_input", "header "+h+" given more than once", h)
				return
			}
		}
		tok, ok := bearer(r.Header.Get("Authorization"))
		if h := strings.TrimSpace(r.Header.Get("Authorization")); h != "" && !ok && !s.o.Insecure {
			// A key without its scheme is not "no key" (issue 43).
			w.Header().Set("WWW-Authenticate", `Bearer realm="remstore"`)
			writeError(w, http.StatusUnauthorized, "unauthorized", `the Authorization header must be "Bearer <key>": the Bearer scheme is missing`, "Authorization")
			return
		}
		client := clientOf(r)
		if wait := s.guesses.Wait(client); wait > 0 {
			// Refused without checking the key: guessing gets no answer.
			w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
			writeError(w, http.StatusTooManyRequests, "too_many_failed_keys",
				fmt.Sprintf("more than %d wrong API keys from your network within %s: wait", signin.Failures, signin.Window), "Authorization")
			return
		}
		user, budget, err := s.resolveUser(tok, ok, r.Header.Get("X-User-Id"))
		if err != nil {
			if err.status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="remstore"`)
				if ok { // a key, and a wrong one: a guess (the request's log line says so)
					s.guesses.Fail(client)
				}
			}
			writeError(w, err.status, err.code, err.msg, err.field)
			return
		}
		infoOf(r).user, infoOf(r).budget = user, budget // for the handlers and the request log line
		SignedIn(r.Context())                           // its connection is no guest now (LimitListener)
		// Said on every answer: a caller that forgot X-User-Id sees that it
		// acted as "anonymous" (issue 43), not only an empty list later.
		w.Header().Set(UserHeader, user)
		next.ServeHTTP(w, r)
	})
}

// authError is a refused key: its status, code, message and field.
type authError struct {
	status           int
	code, msg, field string
}

func (e *authError) Error() string { return e.msg }

// resolveUser checks an API key (constant time, over hashes so the length of
// a key leaks nothing) and returns the user a request acts for: the key's
// bound user, or the requested one (X-User-Id, or the viewer's user field)
// for an unbound key, or DefaultUserID. The API and the viewer's sign-in
// both call it, so a key means the same in both.
//
// budget is who pays for the caller's searches (searchGate): the key when
// it is not bound to one user, since whoever holds it may name any user
// (16 forged X-User-Ids behind one key took 16 searches' share), else the
// user.
func (s *Server) resolveUser(tok string, hasTok bool, user string) (_, budget string, _ *authError) {
	if !s.o.Insecure {
		if !hasTok {
			return "", "", &authError{http.StatusUnauthorized, "unauthorized", `missing API key: send "Authorization: Bearer <key>" (the clients read theirs from REMSTORE_API_KEY)`, "Authorization"}
		}
		sum := sha256.Sum256([]byte(tok))
		match := -1
		for i, k := range s.keys {
			if subtle.ConstantTimeCompare(sum[:], k.sum[:]) == 1 {
				match = i
			}
		}
		if match < 0 {
			return "", "", &authError{http.StatusUnauthorized, "unauthorized", "unknown API key (the server takes its keys from REMSTORE_API_KEYS or --api-keys-file; the clients send theirs from REMSTORE_API_KEY)", "Authorization"}
		}
		if bound := s.keys[match].userID; bound != "" {
			if user != "" && user != bound {
				return "", "", &authError{http.StatusForbidden, "forbidden", "this API key may not act for that user", "X-User-Id"}
			}
			user = bound
		} else {
			budget = "key " + strconv.Itoa(match)
		}
	}
	if user == "" {
		user = DefaultUserID
	}
	if budget == "" {
		budget = "user " + user
	}
	return user, budget, nil
}

// --- helpers ---

// withStore adapts a handler that needs the requesting user's store and
// reports failure by returning an error, which fail maps to a response.
// A query parameter given twice is refused before the handler reads one.
func (s *Server) withStore(h func(http.ResponseWriter, *http.Request, sessionStore) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		st, err := s.o.Stores.For(userOf(r))
		if err == nil {
			err = query.Once(r)
		}
		if err == nil {
			err = h(w, r, st)
		}
		if err != nil {
			s.fail(w, r, err)
		}
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ErrorBody is every error response: {"error": {"code", "message", "field"}}.
type ErrorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Field   string `json:"field,omitempty"`
		// Last is the session's last message now, on a guarded store
		// refused because the session moved on (field expect_last).
		Last string `json:"last,omitempty"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, msg, field string) {
	writeErrorBody(w, status, code, msg, field, "")
}

func writeErrorBody(w http.ResponseWriter, status int, code, msg, field, last string) {
	var b ErrorBody
	b.Error.Code, b.Error.Message, b.Error.Field, b.Error.Last = code, msg, field, last
	writeJSON(w, status, b)
}

// fail answers an error with the status and code of its class
// (sessionstore.Classify, the classification every surface maps from).
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", fmt.Sprintf("request body larger than %d bytes", mbe.Limit), "body")
		return
	}
	c := sessionstore.Classify(err)
	msg := err.Error()
	switch {
	case c.Kind == sessionstore.BadInput && repository.IsDataException(err):
		msg = "the database refused a value of the request: " + dbMessage(err)
	case c.Kind == sessionstore.Timeout:
		msg = "request timed out"
	case c.Code == "storage_error":
		s.o.Logger.Error("request failed", "id", infoOf(r).id, "err", err)
		msg = "storage failed; see the server log with this request id"
	case c.Kind == sessionstore.NotFound && r.PathValue("id") != "":
		// The session as the caller named it, not the UUID the store
		// resolved the name to, which the caller never saw.
		msg = fmt.Sprintf("session %q: not found for user %q (a session another user stored is not visible to this one)", r.PathValue("id"), userOf(r))
	}
	var reused *keyReusedError
	if errors.As(err, &reused) {
		writeError(w, http.StatusConflict, "idempotency_key_reused", err.Error(), "Idempotency-Key")
		return
	}
	var moved *sessionstore.MovedError
	last := ""
	if errors.As(err, &moved) {
		last = moved.Last
	}
	writeErrorBody(w, c.Kind.HTTPStatus(), c.Code, msg, c.Field, last)
}

func (s *Server) timed(op string, start time.Time) {
	s.m.ops.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.o.Stores.DB().PingContext(ctx); err != nil {
		writeError(w, http.StatusServiceUnavailable, "not_ready", "database unreachable", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// dbMessage is the server's own message of a database error, without SQL.
func dbMessage(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Message
	}
	return "invalid value"
}

// poolCollectors report a pgx pool behind the database, labelled pool="main"
// (the store's hot reads and writes take their connections there, past
// database/sql's own statistics) or pool="loads" (repository.DB.LoadPool).
func poolCollectors(pool *pgxpool.Pool, name string) []prometheus.Collector {
	labels := prometheus.Labels{"pool": name}
	gauge := func(name, help string, f func(*pgxpool.Stat) float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "remstore_pool_" + name, Help: help, ConstLabels: labels}, func() float64 { return f(pool.Stat()) })
	}
	counter := func(name, help string, f func(*pgxpool.Stat) float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "remstore_pool_" + name, Help: help, ConstLabels: labels}, func() float64 { return f(pool.Stat()) })
	}
	return []prometheus.Collector{
		gauge("max_conns", "Connections the pool may open (pool_max_conns).", func(s *pgxpool.Stat) float64 { return float64(s.MaxConns()) }),
		gauge("total_conns", "Connections open.", func(s *pgxpool.Stat) float64 { return float64(s.TotalConns()) }),
		gauge("acquired_conns", "Connections in use.", func(s *pgxpool.Stat) float64 { return float64(s.AcquiredConns()) }),
		gauge("idle_conns", "Connections idle in the pool.", func(s *pgxpool.Stat) float64 { return float64(s.IdleConns()) }),
		counter("acquires_total", "Connections taken from the pool.", func(s *pgxpool.Stat) float64 { return float64(s.AcquireCount()) }),
		counter("empty_acquires_total", "Acquires that waited: every connection was in use.", func(s *pgxpool.Stat) float64 { return float64(s.EmptyAcquireCount()) }),
		counter("acquire_wait_seconds_total", "Time spent waiting for a connection.", func(s *pgxpool.Stat) float64 { return s.AcquireDuration().Seconds() }),
	}
}

// CheckTraceURL refuses a TraceURL the viewer could not use
// (viewer.CheckTraceURL), before anything is opened.
func CheckTraceURL(tmpl string) error { return viewer.CheckTraceURL(tmpl) }

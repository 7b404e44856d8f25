package viewer

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/query"
	"github.com/remstore/remstore/internal/signin"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Favicon is the viewer's icon (SVG), served at /favicon.ico by the API.
//
//go:embed static/favicon.svg
var Favicon []byte

// Store is what the viewer reads of a session store bound to the signed-in
// user; *sessionstore.Store implements it.
type Store interface {
	Lookup(ctx context.Context, key string) (string, error)
	ListSessions(ctx context.Context, o sessionstore.ListOptions) (sessionstore.ListResult, error)
	SessionStats(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]sessionstore.Stats, error)
	LoadEach(ctx context.Context, sessionKey string, o sessionstore.LoadOptions, fn func(models.HistoryMessage) error) error
	SessionInfo(ctx context.Context, sessionKey string) (sessionstore.SessionInfo, error)
	SearchPage(ctx context.Context, o sessionstore.SearchOptions) (sessionstore.SearchResult, error)
	CatchUpSearch(ctx context.Context, o *sessionstore.SearchOptions) (bool, error)
}

var _ Store = (*sessionstore.Store)(nil)

// Options configure the viewer.
type Options struct {
	// NewStore binds a store to a user.
	NewStore func(user string) (Store, error)
	// SignIn checks an API key and returns the user it acts for (the key's
	// bound user, or user for an unbound key), as the API's auth does, and
	// who pays for the sign-in's searches (BeginSearch's budget).
	SignIn func(key, user string) (acting, budget string, err error)
	// KeyOptional: the API runs without keys (loopback only), so the sign-in
	// form asks for a user alone.
	KeyOptional    bool
	AuditDir       string // DEBUG_AUDIT_DIR; "" = no audit page content
	TruncateLength int    // T, for the per-message bars; 0 = 200
	Logger         *slog.Logger
	SessionTTL     time.Duration // sign-in lifetime; 0 = 8 hours
	Now            func() time.Time
	// ClientAddr is the client's address for the sign-in limiter and its
	// log lines (the API passes the one a trusted proxy names); nil = the
	// connection's.
	ClientAddr func(*http.Request) string
	// BeginSearch takes a search's budget (the API's, shared; SignIn says whose),
	// then runs prepare (the index's catch-up) uncharged: a bounded context
	// and the func that gives it back, or prepare's error, or an error to
	// show (429; prepare not run; one with a RetryAfter() time.Duration
	// method sets the Retry-After header). nil = no budget.
	BeginSearch func(ctx context.Context, budget string, prepare func(context.Context) error) (context.Context, func(), error)
	// TraceURL links a message's trace to the user's tracing system: an
	// http(s) URL in which {trace_id} and {span_id} stand for the message's
	// ids (escaped), e.g. http://jaeger:16686/trace/{trace_id}. "" shows
	// the ids without a link.
	TraceURL string
}

// CheckTraceURL refuses a TraceURL that is not an http(s) URL naming
// {trace_id}.
func CheckTraceURL(tmpl string) error {
	if tmpl == "" {
		return nil
	}
	if !strings.Contains(tmpl, "{trace_id}") {
		return fmt.Errorf("trace URL %q: name the trace as {trace_id}", tmpl)
	}
	u, err := url.Parse(strings.NewReplacer("{trace_id}", "t", "{span_id}", "s").Replace(tmpl))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("trace URL %q: must be an http:// or https:// URL", tmpl)
	}
	return nil
}

// traceLink is Options.TraceURL for one message ("" without a template or
// a trace id).
func (v *Viewer) traceLink(traceID, spanID string) string {
	if v.o.TraceURL == "" || traceID == "" {
		return ""
	}
	return strings.NewReplacer("{trace_id}", url.PathEscape(traceID), "{span_id}", url.PathEscape(spanID)).Replace(v.o.TraceURL)
}

// Viewer is the http.Handler of /ui/.
type Viewer struct {
	o     Options
	mux   *http.ServeMux
	tmpl  map[string]*template.Template
	auth  *sessions
	limit *signin.Limiter
}

// CSP allows only the viewer's own script, style and images: no inline
// script, no inline style, nothing from another origin.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// New builds the viewer.
func New(o Options) (*Viewer, error) {
	if err := CheckTraceURL(o.TraceURL); err != nil {
		return nil, err
	}
	if o.NewStore == nil || o.SignIn == nil {
		return nil, errors.New("viewer: NewStore and SignIn are required")
	}
	if o.TruncateLength <= 0 {
		o.TruncateLength = 200
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.SessionTTL <= 0 {
		o.SessionTTL = 8 * time.Hour
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	v := &Viewer{o: o, mux: http.NewServeMux(), tmpl: map[string]*template.Template{},
		auth: &sessions{m: map[string]*signedIn{}, ttl: o.SessionTTL, now: o.Now}, limit: signin.New(o.Now)}
	if v.o.ClientAddr == nil {
		v.o.ClientAddr = func(r *http.Request) string {
			if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
				return h
			}
			return r.RemoteAddr
		}
	}
	for _, page := range []string{"login", "sessions", "session", "audit", "call", "search", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+page+".html")
		if err != nil {
			return nil, fmt.Errorf("viewer: template %s: %w", page, err)
		}
		v.tmpl[page] = t
	}
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/ui/static/", http.FileServerFS(static))
	v.mux.HandleFunc("GET /ui/static/", func(w http.ResponseWriter, r *http.Request) {
		// Files only: no listing of the folder.
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
	v.mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/ui/sessions", http.StatusSeeOther)
	})
	v.mux.HandleFunc("GET /ui/login", v.loginForm)
	v.mux.HandleFunc("POST /ui/login", v.login)
	v.mux.HandleFunc("POST /ui/logout", v.signedIn(v.logout))
	v.mux.HandleFunc("GET /ui/sessions", v.signedIn(v.sessionsPage))
	v.mux.HandleFunc("GET /ui/sessions/{id}", v.signedIn(v.sessionPage))
	v.mux.HandleFunc("GET /ui/sessions/{id}/audit", v.signedIn(v.auditPage))
	v.mux.HandleFunc("GET /ui/sessions/{id}/audit/{n}", v.signedIn(v.callPage))
	v.mux.HandleFunc("GET /ui/sessions/{id}/json", v.signedIn(v.sessionJSON))
	v.mux.HandleFunc("GET /ui/lookup", v.signedIn(v.lookup))
	v.mux.HandleFunc("GET /ui/search", v.signedIn(v.searchPage))
	return v, nil
}

// ServeHTTP sets the security headers on every response, then routes. A
// query parameter given twice is refused (400 naming it) before any page
// reads one, by the API's rule (package query).
func (v *Viewer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// same-origin, not no-referrer: under no-referrer a browser sends
	// "Origin: null" with every form POST, which the API's cross-site check
	// (httpapi guardHosts) must refuse. Nothing leaks to another site either way.
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	if err := query.Once(r); err != nil {
		v.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	v.mux.ServeHTTP(w, r)
}

type request struct {
	id    string
	si    *signedIn
	store Store
}

// signedIn runs h for a signed-in browser (a POST only with its CSRF token);
// any other request goes to the sign-in form.
func (v *Viewer) signedIn(h func(http.ResponseWriter, *http.Request, *request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, si := v.auth.get(r)
		if si == nil {
			if r.Method == http.MethodGet && !strings.HasPrefix(r.URL.Path, "/ui/lookup") {
				http.Redirect(w, r, "/ui/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			v.fail(w, r, http.StatusUnauthorized, "sign in first")
			return
		}
		if r.Method == http.MethodPost && !sameToken(r.PostFormValue("csrf"), si.csrf) {
			v.fail(w, r, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		st, err := v.o.NewStore(si.user)
		if err == nil {
			err = h(w, r, &request{id: id, si: si, store: st})
		}
		if err != nil {
			v.storeError(w, r, err)
		}
	}
}

// storeError answers an error with the status of its class, as the API
// does (sessionstore.Classify).
func (v *Viewer) storeError(w http.ResponseWriter, r *http.Request, err error) {
	c := sessionstore.Classify(err)
	msg := err.Error()
	switch {
	case c.Kind == sessionstore.NotFound:
		msg = "not found"
	case c.Code == "storage_error":
		v.o.Logger.Error("viewer", "path", r.URL.Path, "err", err)
		msg = "storage failed; see the server log"
	case c.Kind == sessionstore.Timeout:
		msg = "request timed out"
	}
	v.fail(w, r, c.Kind.HTTPStatus(), msg)
}

func (v *Viewer) fail(w http.ResponseWriter, r *http.Request, code int, msg string) {
	if strings.HasPrefix(r.URL.Path, "/ui/lookup") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	v.render(w, code, "error", map[string]any{"Code": code, "Message": msg})
}

func (v *Viewer) render(w http.ResponseWriter, code int, page string, data map[string]any) {
	var b strings.Builder
	if err := v.tmpl[page].Execute(&b, data); err != nil {
		v.o.Logger.Error("viewer: render", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(b.String()))
}

// --- sign-in ---

func (v *Viewer) loginForm(w http.ResponseWriter, r *http.Request) {
	tok := token()
	setCookie(w, r, loginCookie, tok, 600)
	// The error comes back in the URL, so only the sign-in's own messages
	// are shown: a crafted link cannot put its text on this page.
	msg := r.URL.Query().Get("error")
	if !signInErrors[msg] {
		msg = ""
	}
	v.render(w, http.StatusOK, "login", map[string]any{"CSRF": tok, "Next": safeNext(r.URL.Query().Get("next")),
		"KeyOptional": v.o.KeyOptional, "Error": msg})
}

// signInErrors are the messages a refused sign-in can show (the API's own).
var signInErrors = map[string]bool{
	"missing bearer API key": true, "unknown API key": true, "this API key may not act for that user": true,
	tooManyFailures: true,
}

const tooManyFailures = "too many failed sign-ins from here: wait a minute"

// SignInFailures failures within SignInWindow refuse a client's sign-ins
// until the window ends (package signin).
const (
	SignInFailures = signin.Failures
	SignInWindow   = signin.Window
)

func (v *Viewer) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	c, err := r.Cookie(loginCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), c.Value) {
		v.fail(w, r, http.StatusForbidden, "missing or wrong CSRF token: reload the sign-in page")
		return
	}
	next := safeNext(r.PostFormValue("next"))
	key, asked, client := r.PostFormValue("key"), strings.TrimSpace(r.PostFormValue("user")), v.o.ClientAddr(r)
	if wait := v.limit.Wait(client); wait > 0 {
		// Refused without checking the key: guessing gets no answer.
		v.o.Logger.Warn("viewer: sign-in refused", "client", client, "user", asked, "retry_after_s", int(wait.Seconds()+0.999))
		w.Header().Set("Retry-After", strconv.Itoa(int(wait.Seconds()+0.999)))
		http.Redirect(w, r, "/ui/login?error="+url.QueryEscape(tooManyFailures)+"&next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	user, budget, err := v.o.SignIn(key, asked)
	if err != nil {
		v.limit.Fail(client)
		v.o.Logger.Warn("viewer: sign-in failed", "client", client, "user", asked, "reason", err.Error())
		http.Redirect(w, r, "/ui/login?error="+url.QueryEscape(err.Error())+"&next="+url.QueryEscape(next), http.StatusSeeOther)
		return
	}
	id, _ := v.auth.create(user, budget)
	setCookie(w, r, loginCookie, "", -1)
	setCookie(w, r, sessionCookie, id, int(v.o.SessionTTL.Seconds()))
	v.o.Logger.Info("viewer: signed in", "user", user, "client", client)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (v *Viewer) logout(w http.ResponseWriter, r *http.Request, q *request) error {
	v.auth.drop(q.id)
	setCookie(w, r, sessionCookie, "", -1)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
	return nil
}

// safeNext keeps a redirect target inside the viewer.
func safeNext(s string) string {
	if !strings.HasPrefix(s, "/ui/") || strings.HasPrefix(s, "//") || strings.ContainsAny(s, "\\\r\n") {
		return "/ui/sessions"
	}
	return s
}

// --- pages ---

func (v *Viewer) base(q *request, title string) map[string]any {
	return map[string]any{"Title": title, "User": q.si.user, "CSRF": q.si.csrf}
}

func (v *Viewer) sessionsPage(w http.ResponseWriter, r *http.Request, q *request) error {
	qs := r.URL.Query()
	o := sessionstore.ListOptions{AgentName: qs.Get("agent"), Cursor: qs.Get("cursor"), Limit: 50}
	if st := qs.Get("status"); st != "" {
		o.Statuses = []string{st}
	}
	if n, err := strconv.Atoi(qs.Get("limit")); err == nil {
		o.Limit = n
	}
	res, err := q.store.ListSessions(r.Context(), o)
	if err != nil {
		return err
	}
	ids := make([]uuid.UUID, len(res.Sessions))
	for i, s := range res.Sessions {
		ids[i] = s.ID
	}
	stats, err := q.store.SessionStats(r.Context(), ids)
	if err != nil {
		return err
	}
	type row struct {
		sessionstore.SessionInfo
		Stats sessionstore.Stats
		Last  time.Time
	}
	// Failed steps (issue 41): counted for the page's sessions; the filter
	// keeps those of this page that have one.
	failedOnly := qs.Get("failed") == "1"
	rows := make([]row, 0, len(res.Sessions))
	for _, s := range res.Sessions {
		st := stats[s.ID]
		last := s.UpdatedAt
		if st.LastMessage.After(last) {
			last = st.LastMessage
		}
		if !failedOnly || st.Failed > 0 {
			rows = append(rows, row{s, st, last})
		}
	}
	// The cursor only goes forward; the pages before are remembered in the
	// link itself (trail: the cursors of the pages before, "-" the first),
	// bounded so a link stays short.
	var trail []string
	if t := qs.Get("trail"); t != "" {
		trail = strings.Split(t, ",")
	}
	if len(trail) > 50 {
		trail = trail[len(trail)-50:]
	}
	link := func(cursor string, trail []string) string {
		nq := url.Values{}
		if cursor != "" && cursor != "-" {
			nq.Set("cursor", cursor)
		}
		if len(trail) > 0 {
			nq.Set("trail", strings.Join(trail, ","))
		}
		for _, k := range []string{"agent", "status", "limit", "failed"} {
			if qs.Get(k) != "" {
				nq.Set(k, qs.Get(k))
			}
		}
		return "/ui/sessions?" + nq.Encode()
	}
	next, prev := "", ""
	if res.NextCursor != "" {
		here := o.Cursor
		if here == "" {
			here = "-"
		}
		next = link(res.NextCursor, append(slices.Clone(trail), here))
	}
	if len(trail) > 0 {
		prev = link(trail[len(trail)-1], trail[:len(trail)-1])
	} else if o.Cursor != "" {
		prev = link("", nil)
	}
	d := v.base(q, "Sessions")
	d["Rows"], d["Total"], d["Next"], d["Prev"], d["Agent"], d["Status"] = rows, res.Total, next, prev, qs.Get("agent"), qs.Get("status")
	d["FailedOnly"] = failedOnly
	d["Statuses"] = models.Statuses()
	v.render(w, http.StatusOK, "sessions", d)
	return nil
}

func (v *Viewer) lookup(w http.ResponseWriter, r *http.Request, q *request) error {
	content, err := q.store.Lookup(r.Context(), r.URL.Query().Get("key"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	// parts: the text as the page draws it (inertParts), for Expand.
	return json.NewEncoder(w).Encode(map[string]any{"content": content, "parts": inertParts(content)})
}

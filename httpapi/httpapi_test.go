package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/version"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

const key = "test-key-0123456789"

func newAPI(t *testing.T, db *repository.DB, o Options) *Server {
	t.Helper()
	if o.Stores == nil {
		stores, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: 10})
		if err != nil {
			t.Fatal(err)
		}
		o.Stores = stores
	}
	if o.APIKeys == nil && !o.Insecure {
		o.APIKeys = []APIKey{{Key: key}, {Key: "alice-only-0123456789", UserID: "alice"}}
	}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type call struct {
	method, path, body string
	user, auth         string
	ikey               string // Idempotency-Key, sent when not ""
	expect             string // X-Remstore-Expect-Last, sent when not ""
}

func do(t *testing.T, h http.Handler, c call) (int, string, http.Header) {
	t.Helper()
	r := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.auth == "" {
		c.auth = key
	}
	if c.auth != "-" {
		r.Header.Set("Authorization", "Bearer "+c.auth)
	}
	if c.user != "" {
		r.Header.Set("X-User-Id", c.user)
	}
	if c.ikey != "" {
		r.Header.Set("Idempotency-Key", c.ikey)
	}
	if c.expect != "" {
		r.Header.Set(ExpectLastHeader, c.expect)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String(), w.Header()
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	api := newAPI(t, db, Options{})
	long := strings.Repeat("long answer ", 5)
	steps := []struct {
		c    call
		code int
		want string
	}{
		{call{method: "GET", path: "/healthz", auth: "-"}, 200, `"version":"` + version.String() + `"`},
		{call{method: "GET", path: "/readyz", auth: "-"}, 200, `"ready"`},
		{call{method: "GET", path: "/v1/sessions", auth: "-"}, 401, `"unauthorized"`},
		{call{method: "GET", path: "/v1/sessions", auth: "wrong-key-0123456789"}, 401, `unknown API key (the server takes its keys from REMSTORE_API_KEYS`},
		{call{method: "GET", path: "/v1/sessions", auth: "alice-only-0123456789", user: "bob"}, 403, `"forbidden"`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `[{"role":"user","content":"hi"},{"role":"assistant","content":"` + long + `"}]`}, 201, `"stored":2`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `{"messages":[{"role":"user","content":"again"}]}`}, 201, `"stored":1`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `[{"role":"user","content":"a\u0000b"}]`}, 400, `"field":"messages[0].content"`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `[{"role":"user"`}, 400, `"invalid_input"`},
		// A message that is not JSON names the message, not "messages[0]." (issue 43).
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `[{"role":"user","content":"a",}]`}, 400, `"field":"messages[0]"}`},
		// No route, or not this method: the JSON error shape, not ServeMux's plain text.
		{call{method: "GET", path: "/v1/nope", user: "alice"}, 404, `{"error":{"code":"not_found","message":"no route GET /v1/nope (the routes are listed at /openapi.json)"}}`},
		{call{method: "PUT", path: "/v1/sessions/chat-1/messages", user: "alice"}, 405, `"code":"method_not_allowed","message":"PUT is not allowed on /v1/sessions/chat-1/messages; allowed: DELETE, GET, HEAD, POST"`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `{"msgs":[]}`}, 400, `"field":"messages"`},
		{call{method: "POST", path: "/v1/messages", user: "alice", body: `[]`}, 400, `"field":"session_id"`},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages", user: "alice"}, 200, `"_entity_key":"session-`},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages?compress=false", user: "alice"}, 200, long},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages?format=pydantic-ai&system_prompt=S", user: "alice"}, 200, `"part_kind":"system-prompt"`},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages?format=xml", user: "alice"}, 400, `"field":"format"`},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages?since=yesterday", user: "alice"}, 400, `"field":"since"`},
		{call{method: "GET", path: "/v1/sessions/chat-1/messages", user: "bob"}, 200, `[]`},
		{call{method: "GET", path: "/v1/lookup?key=" + url.QueryEscape("nonsense"), user: "alice"}, 400, `"field":"key"`},
		{call{method: "GET", path: "/v1/sessions?status=active", user: "alice"}, 200, `"total":1`},
		{call{method: "GET", path: "/v1/sessions?limit=9999", user: "alice"}, 400, `"field":"limit"`},
		{call{method: "GET", path: "/v1/sessions", user: "bob"}, 200, `"total":0`},
		{call{method: "GET", path: "/v1/sessions/chat-1", user: "alice"}, 200, `"session":{`},
		{call{method: "GET", path: "/v1/sessions/chat-1", user: "bob"}, 404, `"not_found"`},
		{call{method: "PATCH", path: "/v1/sessions/chat-1", user: "alice", body: `{"agent_name":"planner","settings":{"model":"gpt-4o"}}`}, 200, `"agent_name":"planner"`},
		{call{method: "PATCH", path: "/v1/sessions/chat-1", user: "alice", body: `{"colour":"red"}`}, 400, `unknown field`},
		{call{method: "POST", path: "/v1/sessions/chat-1/fork", user: "alice", body: `{"up_to":2,"new_session_id":"chat-2"}`}, 201, `"forked_from"`},
		{call{method: "POST", path: "/v1/sessions/chat-1/cancel", user: "alice", body: `{"reason":"stop"}`}, 200, `"status":"cancelled"`},
		{call{method: "POST", path: "/v1/sessions/chat-1/messages", user: "alice", body: `[{"role":"user","content":"late"}]`}, 409, `"session_not_active"`},
		{call{method: "PATCH", path: "/v1/sessions/chat-1", user: "alice", body: `{"status":"active"}`}, 409, `"invalid_transition"`},
		{call{method: "DELETE", path: "/v1/sessions/chat-2?purge=true", user: "alice"}, 204, ``},
		{call{method: "DELETE", path: "/v1/sessions/chat-2", user: "alice"}, 404, `"not_found"`},
		{call{method: "GET", path: "/openapi.json", auth: "-"}, 200, `"openapi"`},
		{call{method: "GET", path: "/nope", user: "alice"}, 404, ``},
	}
	for i, s := range steps {
		code, body, hdr := do(t, api, s.c)
		if code != s.code || !strings.Contains(body, s.want) {
			t.Fatalf("step %d %s %s: %d %s; want %d with %q", i, s.c.method, s.c.path, code, body, s.code, s.want)
		}
		if hdr.Get("X-Request-Id") == "" {
			t.Fatalf("step %d: no request id", i)
		}
		if code >= 400 && s.c.path != "/nope" {
			var eb ErrorBody
			if json.Unmarshal([]byte(body), &eb) != nil || eb.Error.Code == "" || eb.Error.Message == "" {
				t.Fatalf("step %d: error body %q", i, body)
			}
		}
	}
	// lookup through the phrase, and isolation
	_, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/chat-1/messages", user: "alice"})
	var hist []models.HistoryMessage
	if err := json.Unmarshal([]byte(body), &hist); err != nil {
		t.Fatal(err)
	}
	k := hist[1].EntityKey
	code, body, _ := do(t, api, call{method: "GET", path: "/v1/lookup?key=" + url.QueryEscape("REM LOOKUP "+k), user: "alice"})
	if code != 200 || !strings.Contains(body, long) {
		t.Fatalf("lookup: %d %s", code, body)
	}
	if code, _, _ := do(t, api, call{method: "GET", path: "/v1/lookup?key=" + url.QueryEscape(k), user: "bob"}); code != 404 {
		t.Fatalf("bob looked up alice's text: %d", code)
	}
	_, metrics, _ := do(t, api, call{method: "GET", path: "/metrics", auth: "-"})
	for _, want := range []string{`remstore_http_requests_total{code="201",method="POST",route="POST /v1/sessions/{id}/messages"}`, `remstore_operation_duration_seconds_count{op="lookup"}`, `go_sql_max_open_connections{db_name="remstore"}`, `remstore_pool_max_conns{pool="main"} 32`, `remstore_pool_max_conns{pool="loads"} 16`, "remstore_pool_acquires_total"} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestBodyLimitAndInFlight(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	api := newAPI(t, db, Options{MaxBodyBytes: 1024, MaxInFlight: 2})
	code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/s/messages", body: `[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]`})
	if code != 413 || !strings.Contains(body, "body_too_large") {
		t.Fatalf("413: %d %s", code, body)
	}
	api.inflight.take("key 1") // two requests in flight, another caller's
	api.inflight.take("key 2")
	code, body, hdr := do(t, api, call{method: "GET", path: "/v1/sessions"})
	if code != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "too_many_requests") {
		t.Fatalf("429: %d %s", code, body)
	}
	if code, _, _ := do(t, api, call{method: "GET", path: "/healthz", auth: "-"}); code != 200 {
		t.Fatal("health check counted against the cap")
	}
	api.inflight.give("key 2")
	if code, _, _ := do(t, api, call{method: "GET", path: "/v1/sessions"}); code != 200 {
		t.Fatalf("after a slot freed: %d", code)
	}
}

// Every route is in the OpenAPI document, and the document names no other.
func TestOpenAPICoversRoutes(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		if _, ok := doc.Paths[path][strings.ToLower(method)]; !ok {
			t.Errorf("%s is not in openapi.json", r)
		}
	}
	for _, ops := range doc.Paths {
		n += len(ops)
	}
	if n != len(routes) {
		t.Errorf("openapi.json has %d operations, the server %d", n, len(routes))
	}
}

func TestNewRefusesNoAuth(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Stores: mustStores(t, dbtest.NewSQLite(t))}); err == nil {
		t.Fatal("a server without keys and without Insecure was built")
	}
	if _, err := ParseAPIKeys("short"); err == nil {
		t.Fatal("a short key was accepted")
	}
	keys, err := ParseAPIKeys("aaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbb=alice\n# comment\n")
	if err != nil || len(keys) != 2 || keys[1].UserID != "alice" {
		t.Fatalf("%+v %v", keys, err)
	}
}

// Shutdown while writes are in flight: every write that was acknowledged is stored.
func TestGracefulShutdownKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	api := newAPI(t, db, Options{Insecure: true, MaxInFlight: 1000})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: api}
	go func() { _ = srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	started := make(chan struct{}, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			content := fmt.Sprintf("message-%d", i)
			resp, err := http.Post(base+"/v1/sessions/shutdown/messages", "application/json",
				bytes.NewBufferString(`[{"role":"user","content":"`+content+`"}]`))
			if err != nil {
				return // refused after shutdown began: not acknowledged
			}
			defer resp.Body.Close()
			if resp.StatusCode == 201 {
				mu.Lock()
				acked[content] = true
				mu.Unlock()
			}
		}()
	}
	for range 200 {
		<-started
	}
	// Shut down mid-stream: once some writes are acknowledged, while others are in flight.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 20 {
			break
		}
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if _, err := http.Post(base+"/v1/sessions/shutdown/messages", "application/json", strings.NewReader(`[]`)); err == nil {
		t.Fatal("a request after shutdown was served")
	}
	st, _ := sessionstore.New(db, sessionstore.Options{UserID: DefaultUserID})
	h, err := st.Load(context.Background(), "shutdown", sessionstore.LoadOptions{NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, m := range h {
		stored[m.Content] = true
	}
	for c := range acked {
		if !stored[c] {
			t.Fatalf("acknowledged %s was lost", c)
		}
	}
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged; the test proved nothing")
	}
	t.Logf("%d acknowledged, %d stored", len(acked), len(stored))
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	mem, _ := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice", TruncateLength: 10})
	_, _ = mem.Store(context.Background(), "mw", []models.HistoryMessage{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: strings.Repeat("x", 50)}}, sessionstore.StoreOptions{})
	var seen *Turn
	h := Middleware(MiddlewareOptions{
		Store:        func(*http.Request) (*sessionstore.Store, error) { return mem, nil },
		SystemPrompt: "You are a test.",
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, _ := TurnFrom(r.Context())
		if t != nil {
			seen = t
		}
		t.Record(models.HistoryMessage{Role: "user", Content: "now"}, models.HistoryMessage{Role: "assistant", Content: "answer"})
		w.WriteHeader(204)
	}))
	r := httptest.NewRequest("POST", "/agent", nil)
	r.Header.Set("X-Session-Id", "mw")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if seen == nil || len(seen.History) != 2 || !seen.History[1].Compressed || seen.Messages[0].Parts[0].PartKind != "system-prompt" {
		t.Fatalf("turn %+v", seen)
	}
	after, _ := mem.Load(context.Background(), "mw", sessionstore.LoadOptions{})
	if len(after) != 4 || after[3].Content != "answer" {
		t.Fatalf("turn not stored: %d", len(after))
	}
	// no session id: passes through without a turn
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
}

// Over HTTP, alice's session is, for bob, a session that does not exist: every
// route answers 404 (the load, an empty history) and alice's session is as
// she left it.
func TestTenancyHTTP(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewPostgres(t), Options{})
	id := "6e3e7151-1111-4222-8333-944445555666"
	long := strings.Repeat("alice's long answer ", 3)
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/" + id + "/messages", user: "alice",
		body: `[{"role":"user","content":"hi"},{"role":"assistant","content":"` + long + `"}]`}); code != 201 {
		t.Fatalf("alice stores: %d %s", code, body)
	}
	_, hist, _ := do(t, api, call{method: "GET", path: "/v1/sessions/" + id + "/messages", user: "alice"})
	i := strings.Index(hist, `"_entity_key":"`)
	if i < 0 {
		t.Fatalf("no key in %s", hist)
	}
	key := hist[i+len(`"_entity_key":"`):]
	key = key[:strings.IndexByte(key, '"')]
	for _, c := range []call{
		{method: "POST", path: "/v1/sessions/" + id + "/messages", body: `[{"role":"user","content":"intrude"}]`},
		{method: "GET", path: "/v1/sessions/" + id},
		{method: "PATCH", path: "/v1/sessions/" + id, body: `{"agent_name":"bob"}`},
		{method: "POST", path: "/v1/sessions/" + id + "/cancel", body: `{"reason":"hijack"}`},
		{method: "POST", path: "/v1/sessions/" + id + "/fork", body: `{}`},
		{method: "DELETE", path: "/v1/sessions/" + id},
		{method: "GET", path: "/v1/lookup?key=" + key},
	} {
		c.user = "bob"
		if code, body, _ := do(t, api, c); code != 404 || strings.Contains(body, "active") {
			t.Errorf("bob %s %s: %d %s", c.method, c.path, code, body)
		}
	}
	if code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/" + id + "/messages", user: "bob"}); code != 200 || strings.TrimSpace(body) != "[]" || h.Get(UserHeader) != "bob" {
		t.Errorf("bob loads alice's session: %d %s (%s: %q)", code, body, UserHeader, h.Get(UserHeader))
	}
	// No X-User-Id with an unbound key: the answer says whose store it used.
	if code, _, h := do(t, api, call{method: "GET", path: "/v1/sessions/" + id + "/messages"}); code != 200 || h.Get(UserHeader) != DefaultUserID {
		t.Errorf("a load without X-User-Id: %d, %s: %q", code, UserHeader, h.Get(UserHeader))
	}
	code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/" + id, user: "alice"})
	if code != 200 || !strings.Contains(body, `"status":"active"`) || strings.Contains(body, "bob") {
		t.Fatalf("alice's session changed: %d %s", code, body)
	}
	if _, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/" + id + "/messages", user: "alice"}); strings.Contains(body, "intrude") {
		t.Fatal("bob's message landed in alice's session")
	}
}

// The outside attack's repros (issue 20): what PostgreSQL would refuse is a
// 400 naming the field, never a 503, and nothing changes.
func TestHardeningHTTP(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewPostgres(t), Options{})
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/x/messages", user: "alice", body: `[{"role":"user","content":"hi"}]`}); code != 201 {
		t.Fatalf("seed: %d %s", code, body)
	}
	for _, tc := range []struct {
		c     call
		code  int
		field string
	}{
		{call{method: "POST", path: "/v1/sessions/x/messages", body: `[{"role":"tool","content":"{}","tool_arguments":{"a":"\ud800"}}]`}, 400, "messages[0].tool_arguments"},
		{call{method: "POST", path: "/v1/sessions/x/messages", body: `[{"role":"user","content":"\udc00"}]`}, 400, "messages[0].content"},
		{call{method: "POST", path: "/v1/sessions/x/messages", body: `[{"role":"assistant","content":"x","usage":{"n":1e999999}}]`}, 400, "messages[0].usage"},
		{call{method: "POST", path: "/v1/sessions/x/messages", body: `[{"role":"tool","content":"x","tool_arguments":{"q":1,"q":2}}]`}, 400, "messages[0].tool_arguments"},
		{call{method: "PATCH", path: "/v1/sessions/x", body: `{"settings":{"a":1e999999}}`}, 400, "settings"},
		{call{method: "PATCH", path: "/v1/sessions/x", body: `{"settings":{"a":"\ud800"}}`}, 400, "settings"},
		{call{method: "POST", path: "/v1/sessions/x/cancel", body: `{"reason":"\ud800"}`}, 400, "reason"},
		{call{method: "GET", path: "/v1/sessions?created_after=0000-01-01T00:00:00Z"}, 400, "created_after"},
		{call{method: "PATCH", path: "/v1/sessions/x", body: `{"agent_name":"SHOULD-NOT-STICK","settings":{"model":"changed"},"status":"bogus"}`}, 400, "status"},
		{call{method: "PATCH", path: "/v1/sessions/x", body: `{"agent_name":"SHOULD-NOT-STICK","settings":{"model":"changed"},"status":"active"}`}, 409, "status"},
	} {
		tc.c.user = "alice"
		code, body, _ := do(t, api, tc.c)
		var eb ErrorBody
		if err := json.Unmarshal([]byte(body), &eb); err != nil {
			t.Fatalf("error body %s: %v", body, err)
		}
		if code != tc.code || eb.Error.Field != tc.field {
			t.Errorf("%s %s %.60s: %d %s, want %d naming %s", tc.c.method, tc.c.path, tc.c.body, code, body, tc.code, tc.field)
		}
	}
	_, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/x", user: "alice"})
	if strings.Contains(body, "SHOULD-NOT-STICK") || strings.Contains(body, "changed") || !strings.Contains(body, `"status":"active"`) {
		t.Errorf("a refused request changed the session: %s", body)
	}
	if _, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/x/messages", user: "alice"}); strings.Count(body, `"role"`) != 1 {
		t.Errorf("a refused store wrote: %s", body)
	}
	// The bearer scheme is case-insensitive.
	r := httptest.NewRequest("GET", "/v1/sessions", nil)
	r.Header.Set("Authorization", "bearer "+key)
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("lower-case bearer: %d", w.Code)
	}
}

// Keys with "=" (base64 padding) stay whole; "key=user" binds when the right
// side is a user id.
func TestParseAPIKeys(t *testing.T) {
	t.Parallel()
	got, err := ParseAPIKeys("c2VjcmV0LWtleS0xMjM0NQ==, c2VjcmV0LWtleS0xMjM0NQ===alice,plain-key-0123456789=bob\n# comment\nanother-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	want := []APIKey{{"c2VjcmV0LWtleS0xMjM0NQ==", ""}, {"c2VjcmV0LWtleS0xMjM0NQ==", "alice"}, {"plain-key-0123456789", "bob"}, {"another-key-0123456789", ""}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("key %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := ParseAPIKeys("short=alice"); err == nil {
		t.Error("a short key accepted")
	}
}

// A store blocked behind a held lock past the request timeout answers
// "timeout", as every other route does, not a storage error.
func TestTimeoutUnderHeldLock(t *testing.T) {
	t.Parallel()
	db := dbtest.NewPostgres(t)
	api := newAPI(t, db, Options{RequestTimeout: 300 * time.Millisecond})
	// Seeded without the short timeout: a first store on a busy machine
	// may take longer than 300 ms, and it is not what is tested.
	if code, body, _ := do(t, newAPI(t, db, Options{}), call{method: "POST", path: "/v1/sessions/held/messages", user: "alice", body: `[{"role":"user","content":"hi"}]`}); code != 201 {
		t.Fatalf("seed: %d %s", code, body)
	}
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []call{
		{method: "POST", path: "/v1/sessions/held/messages", body: `[{"role":"user","content":"blocked"}]`},
		{method: "GET", path: "/v1/sessions/held"},
	} {
		c.user = "alice"
		code, body, _ := do(t, api, c)
		if code != 503 || !strings.Contains(body, `"code":"timeout"`) {
			t.Errorf("%s %s under a held lock: %d %s", c.method, c.path, code, body)
		}
	}
}

// The agent's loop over HTTP: pydantic-ai messages in (?format=pydantic-ai)
// and out, bad input named by message, part and kind with nothing stored,
// and the last message popped / every message cleared.
func TestPydanticAIAndRemoval(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		api := newAPI(t, db, Options{})
		turn := `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"Weather?","timestamp":"2026-01-02T03:04:05Z"}]},` +
			`{"kind":"response","model_name":"m1","parts":[{"part_kind":"tool-call","tool_name":"weather","args":{"city":"Oslo"},"tool_call_id":"c1"}]},` +
			`{"kind":"request","parts":[{"part_kind":"tool-return","tool_name":"weather","content":{"c":-3},"tool_call_id":"c1","timestamp":"2026-01-02T03:04:06Z"}]},` +
			`{"kind":"response","model_name":"m1","parts":[{"part_kind":"text","content":"Cold."}]}]`
		steps := []struct {
			c    call
			code int
			want string
		}{
			{call{method: "POST", path: "/v1/sessions/pa/messages?format=pydantic-ai", user: "alice", body: turn}, 201, `"stored":4`},
			{call{method: "POST", path: "/v1/sessions/pa/messages?format=pydantic-ai", user: "alice",
				body: `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"ok"},{"part_kind":"tool-return","tool_name":"t","content":1}]}]`},
				400, `"field":"messages[0].parts[1].tool_call_id"`},
			{call{method: "POST", path: "/v1/sessions/pa/messages?format=pydantic-ai", user: "alice",
				body: `[{"kind":"response","parts":[{"part_kind":"hologram"}]}]`}, 400, `unknown response part kind \"hologram\"`},
			{call{method: "POST", path: "/v1/sessions/pa/messages?format=pydantic-ai", user: "alice",
				body: `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"a\u0000b"}]}]`}, 400, `"field":"messages[0].parts[0].content"`},
			{call{method: "POST", path: "/v1/sessions/pa/messages?format=yaml", user: "alice", body: `[]`}, 400, `"field":"format"`},
			{call{method: "GET", path: "/v1/sessions/pa/messages", user: "alice"}, 200, `"tool_arguments":{"city":"Oslo"}`},
			{call{method: "GET", path: "/v1/sessions/pa/messages?format=pydantic-ai", user: "alice"}, 200, `"model_name":"m1"`},
			{call{method: "DELETE", path: "/v1/sessions/pa/messages/last", user: "bob"}, 404, `"not_found"`},
			{call{method: "DELETE", path: "/v1/sessions/pa/messages/last", user: "alice"}, 200, `"content":"Cold."`},
			{call{method: "GET", path: "/v1/sessions/pa/messages", user: "alice"}, 200, `"tool_name":"weather"`},
			{call{method: "DELETE", path: "/v1/sessions/pa/messages", user: "bob"}, 404, `"not_found"`},
			{call{method: "DELETE", path: "/v1/sessions/pa/messages", user: "alice"}, 200, `{"removed":3}`},
			{call{method: "DELETE", path: "/v1/sessions/pa/messages/last", user: "alice"}, 200, `{"message":null}`},
			{call{method: "GET", path: "/v1/sessions/pa/messages", user: "alice"}, 200, `[]`},
		}
		for i, s := range steps {
			code, body, _ := do(t, api, s.c)
			if code != s.code || !strings.Contains(body, s.want) {
				t.Fatalf("step %d %s %s: %d %s; want %d with %q", i, s.c.method, s.c.path, code, body, s.code, s.want)
			}
		}
		// The refused stores wrote nothing: 4 rows, all soft-deleted now.
		var n int
		if err := db.NewRaw("SELECT count(*) FROM messages").Scan(context.Background(), &n); err != nil || n != 4 {
			t.Fatalf("%d rows %v", n, err)
		}
	})
}

// TestIdempotencyKey: a store sent again with the same Idempotency-Key
// stores nothing twice, in both formats; another key, user or session is
// another request; a malformed key is refused naming the header.
func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		api := newAPI(t, db, Options{})
		dicts := `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
		pai := `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"again"}]}]`
		steps := []struct {
			c    call
			code int
			want string
		}{
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: dicts, ikey: "k-1"}, 201, `"stored":2`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: dicts, ikey: "k-1"}, 201, `"stored":0`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: dicts, ikey: "k-2"}, 201, `"stored":2`},
			{call{method: "POST", path: "/v1/sessions/ik/messages?format=pydantic-ai", user: "alice", body: pai, ikey: "k-3"}, 201, `"stored":1`},
			{call{method: "POST", path: "/v1/sessions/ik/messages?format=pydantic-ai", user: "alice", body: pai, ikey: "k-3"}, 201, `"stored":0`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "bob", body: dicts, ikey: "k-1"}, 201, `"stored":2`},
			{call{method: "POST", path: "/v1/sessions/ik2/messages", user: "alice", body: dicts, ikey: "k-1"}, 201, `"stored":2`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: dicts, ikey: "has space"}, 400, `"field":"Idempotency-Key"`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: dicts, ikey: strings.Repeat("x", 201)}, 400, `"field":"Idempotency-Key"`},
		}
		for i, s := range steps {
			code, body, _ := do(t, api, s.c)
			if code != s.code || !strings.Contains(body, s.want) {
				t.Fatalf("step %d %s %s: %d %s; want %d with %q", i, s.c.method, s.c.path, code, body, s.code, s.want)
			}
		}
		code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/ik/messages", user: "alice"})
		var got []map[string]any
		if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || len(got) != 5 {
			t.Fatalf("alice's ik: %d %d messages %v: %s", code, len(got), err, body)
		}
	})
}

// TestIdempotencyKeyChecks: the same key with another body is refused and
// stores nothing; a resend never undeletes a session deleted since; a name
// and its UUID are one session for the key.
func TestIdempotencyKeyChecks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		api := newAPI(t, db, Options{})
		first := `[{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]`
		other := `[{"role":"user","content":"hi"},{"role":"assistant","content":"a different answer"}]`
		sid, err := sessionstore.SessionUUID("alice", "ik")
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			c    call
			code int
			want string
		}{
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: first, ikey: "k-1"}, 201, `"stored":2`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: other, ikey: "k-1"}, 409, `"field":"Idempotency-Key"`},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: other, ikey: "k-1"}, 409, `"code":"idempotency_key_reused"`},
			{call{method: "POST", path: "/v1/sessions/" + sid.String() + "/messages", user: "alice", body: first, ikey: "k-1"}, 201, `"stored":0`},
			{call{method: "GET", path: "/v1/sessions/ik/messages", user: "alice"}, 200, `"content":"hello"`},
			{call{method: "DELETE", path: "/v1/sessions/ik", user: "alice"}, 204, ``},
			{call{method: "POST", path: "/v1/sessions/ik/messages", user: "alice", body: first, ikey: "k-1"}, 201, `"stored":0`},
			{call{method: "GET", path: "/v1/sessions/ik", user: "alice"}, 404, `"not_found"`},
		}
		for i, s := range steps {
			code, body, _ := do(t, api, s.c)
			if code != s.code || !strings.Contains(body, s.want) {
				t.Fatalf("step %d %s %s: %d %s; want %d with %q", i, s.c.method, s.c.path, code, body, s.code, s.want)
			}
		}
		n, err := db.NewSelect().Table("messages").Where("session_id = ?", sid).Count(context.Background())
		if err != nil || n != 2 {
			t.Fatalf("%d rows, want 2: %v", n, err)
		}
	})
}

// TestGuardedStoreAndLastN: a load says the session's last message, a store
// naming it is stored, one naming an older one is 409 with the last message
// now (both formats, nothing stored), a resend with the same
// Idempotency-Key is a retry; ?last=N loads the last N, tool pairs whole.
func TestGuardedStoreAndLastN(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		api := newAPI(t, db, Options{})
		load := func(q string) ([]map[string]any, string) {
			t.Helper()
			code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/g/messages" + q, user: "alice"})
			var got []map[string]any
			if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil {
				t.Fatalf("load %s: %d %v %s", q, code, err, body)
			}
			return got, h.Get(LastHeader)
		}
		store := func(c call) (int, StoreResponse, ErrorBody) {
			t.Helper()
			c.method, c.user = "POST", "alice"
			if c.path == "" {
				c.path = "/v1/sessions/g/messages"
			}
			code, body, _ := do(t, api, c)
			var ok StoreResponse
			var bad ErrorBody
			if code < 400 {
				if err := json.Unmarshal([]byte(body), &ok); err != nil {
					t.Fatalf("store answer %s: %v", body, err)
				}
			}
			if code >= 400 {
				if err := json.Unmarshal([]byte(body), &bad); err != nil {
					t.Fatalf("error body %s: %v", body, err)
				}
			}
			return code, ok, bad
		}
		_, last := load("")
		if last != "empty" {
			t.Fatalf("new session: %s %q", LastHeader, last)
		}
		turn := `[{"role":"user","content":"q1"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"search","arguments":"{}"}]},` +
			`{"role":"tool","content":"r1","tool_call_id":"c1","tool_name":"search"},{"role":"assistant","content":"a1"}]`
		code, res, _ := store(call{body: turn, expect: last, ikey: "t1"})
		if code != 201 || res.Stored != 4 || res.Last == "" || res.Last == "empty" {
			t.Fatalf("guarded store: %d %+v", code, res)
		}
		if _, l := load(""); l != res.Last {
			t.Fatalf("load says %q, the store %q", l, res.Last)
		}
		// The resend of the same request is a retry, though its guard is old.
		if code, again, _ := store(call{body: turn, expect: last, ikey: "t1"}); code != 201 || again.Stored != 0 || again.Last != res.Last {
			t.Fatalf("resend: %d %+v", code, again)
		}
		// A racing turn from the same history: 409, naming the last now.
		for _, c := range []call{{body: `[{"role":"user","content":"racing"}]`, expect: last},
			{path: "/v1/sessions/g/messages?format=pydantic-ai", body: `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"racing"}]}]`, expect: last}} {
			code, _, bad := store(c)
			if code != 409 || bad.Error.Code != "conflict" || bad.Error.Field != "expect_last" || bad.Error.Last != res.Last {
				t.Fatalf("stale guard: %d %+v", code, bad)
			}
		}
		for _, c := range []struct{ expect, field string }{{"msg-1", "expect_last"}, {" ", "expect_last"}} {
			if code, _, bad := store(call{body: `[{"role":"user","content":"x"}]`, expect: c.expect}); code != 400 || bad.Error.Field != c.field {
				t.Fatalf("guard %q: %d %+v", c.expect, code, bad)
			}
		}
		if got, _ := load(""); len(got) != 4 {
			t.Fatalf("%d messages after refused stores, want 4", len(got))
		}
		// last=N: the tool result whose call is cut off goes with it.
		for _, c := range []struct {
			n    string
			want []string
		}{{"1", []string{"a1"}}, {"2", []string{"a1"}}, {"3", []string{"", "r1", "a1"}}, {"9", []string{"q1", "", "r1", "a1"}}} {
			got, l := load("?last=" + c.n)
			var contents []string
			for _, m := range got {
				contents = append(contents, m["content"].(string))
			}
			if fmt.Sprint(contents) != fmt.Sprint(c.want) || l != res.Last {
				t.Fatalf("last=%s: %q (last %q), want %q", c.n, contents, l, c.want)
			}
		}
		for _, q := range []string{"?last=0", "?last=x", "?last=2&since=2024-01-01T00:00:00Z"} {
			if code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/g/messages" + q, user: "alice"}); code != 400 || !strings.Contains(body, `"field":"last"`) {
				t.Fatalf("%s: %d %s", q, code, body)
			}
		}
		code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/g/messages?format=pydantic-ai&last=1", user: "alice"})
		if code != 200 || h.Get(LastHeader) != res.Last || !strings.Contains(body, `"a1"`) || strings.Contains(body, `"q1"`) {
			t.Fatalf("pydantic-ai last=1: %d %s %s", code, h.Get(LastHeader), body)
		}
	})
}

func mustStores(t testing.TB, db *repository.DB) *sessionstore.Stores {
	t.Helper()
	s, err := sessionstore.NewStores(db, sessionstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A row the peer wrote with a role of its own has no pydantic-ai form: the
// load leaves it out and says how many in X-Remstore-Unmapped (a trailer
// once the body is past its head); ?strict=true answers 400 naming it.
func TestUnmappedRowsAreCounted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		api := newAPI(t, db, Options{})
		big := strings.Repeat("x", 100<<10)
		for _, c := range []struct{ session, content string }{{"small", "ok"}, {"big", big}} {
			code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/" + c.session + "/messages", user: "alice",
				body: `[{"role":"user","content":"hi"},{"role":"assistant","content":"` + c.content + `"}]`})
			if code != 201 {
				t.Fatalf("store: %d %s", code, body)
			}
			var res StoreResponse
			if err := json.Unmarshal([]byte(body), &res); err != nil {
				t.Fatalf("store answer %s: %v", body, err)
			}
			at := time.Now().Add(time.Hour)
			if _, err := dbtest.PeerStore(ctx, db, uuid.MustParse(res.SessionID), "alice", []dbtest.PeerMessage{{Role: "bot", Content: "beep"}, {Role: "USER", Content: "hey"}},
				func(i int) time.Time { return at.Add(time.Duration(i) * time.Second) }); err != nil {
				t.Fatal(err)
			}
		}
		code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/small/messages?format=pydantic-ai", user: "alice"})
		if code != 200 || h.Get(UnmappedHeader) != "2" || strings.Contains(body, "beep") {
			t.Fatalf("small: %d %q %s", code, h.Get(UnmappedHeader), body)
		}
		code, body, _ = do(t, api, call{method: "GET", path: "/v1/sessions/small/messages?format=pydantic-ai&strict=true", user: "alice"})
		if code != 400 || !strings.Contains(body, `\"bot\" has no pydantic-ai form`) || !strings.Contains(body, `"field":"messages[2].role"`) {
			t.Fatalf("strict: %d %s", code, body)
		}
		// Past the head: the count comes as a trailer, declared up front.
		r := httptest.NewRequest("GET", "/v1/sessions/big/messages?format=pydantic-ai&compress=false", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("X-User-Id", "alice")
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		res := w.Result()
		_, _ = io.ReadAll(res.Body)
		if res.StatusCode != 200 || res.Header.Get("Trailer") != UnmappedHeader || res.Trailer.Get(UnmappedHeader) != "2" || w.Body.Len() < 100<<10 {
			t.Fatalf("big: %d trailer %q=%q, %d bytes", res.StatusCode, res.Header.Get("Trailer"), res.Trailer.Get(UnmappedHeader), w.Body.Len())
		}
		// A history that converts whole carries no count.
		if _, err := db.NewRaw("DELETE FROM messages WHERE role IN ('bot', 'USER')").Exec(ctx); err != nil {
			t.Fatal(err)
		}
		if code, _, h := do(t, api, call{method: "GET", path: "/v1/sessions/small/messages?format=pydantic-ai&strict=true", user: "alice"}); code != 200 || h.Get(UnmappedHeader) != "" {
			t.Fatalf("clean: %d %q", code, h.Get(UnmappedHeader))
		}
	})
}

// Each request leaves one log line with what every layer learned about it:
// the id observe gave it, the route the mux matched, the user auth
// resolved (the key's own user, or X-User-Id under a key that may act for
// any), the client and the status.
func TestRequestLogLine(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	var mu sync.Mutex
	s := newAPI(t, dbtest.NewSQLite(t), Options{})
	s.o.Logger = slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	cases := []struct {
		c                call
		status           int
		route, user, rid string
	}{
		{call{method: "POST", path: "/v1/sessions/s1/messages", body: `[{"role":"user","content":"hi"}]`, auth: "alice-only-0123456789"}, 201, "POST /v1/sessions/{id}/messages", "alice", ""},
		{call{method: "GET", path: "/v1/sessions/s1/messages", user: "bob"}, 200, "GET /v1/sessions/{id}/messages", "bob", ""},
		{call{method: "GET", path: "/v1/nowhere", user: "bob"}, 404, "unmatched", "bob", ""},
		{call{method: "GET", path: "/v1/sessions/s1/messages", auth: "wrong-key-0123456789"}, 401, "unmatched", "", ""},
		{call{method: "GET", path: "/healthz"}, 200, "GET /healthz", "", "given-id-1"},
	}
	for _, k := range cases {
		mu.Lock()
		buf.Reset()
		mu.Unlock()
		r := httptest.NewRequest(k.c.method, k.c.path, strings.NewReader(k.c.body))
		if k.c.auth == "" {
			k.c.auth = key
		}
		r.Header.Set("Authorization", "Bearer "+k.c.auth)
		if k.c.user != "" {
			r.Header.Set("X-User-Id", k.c.user)
		}
		if k.rid != "" {
			r.Header.Set("X-Request-Id", k.rid)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		mu.Lock()
		var line struct {
			Msg, ID, Method, Route, User, Client string
			Status                               int
		}
		err := json.Unmarshal(buf.Bytes(), &line)
		mu.Unlock()
		if err != nil || line.Msg != "request" {
			t.Fatalf("%s %s: log %q: %v", k.c.method, k.c.path, buf.String(), err)
		}
		if w.Code != k.status || line.Status != k.status || line.Route != k.route || line.User != k.user ||
			line.Client != "192.0.2.1" || line.ID == "" || line.ID != w.Header().Get("X-Request-Id") || (k.rid != "" && line.ID != k.rid) {
			t.Errorf("%s %s: answered %d, logged %+v; want %d %q %q", k.c.method, k.c.path, w.Code, line, k.status, k.route, k.user)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A store past a per-user limit: 409 limit_reached naming the field, and
// nothing stored.
func TestLimitReached(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	stores, err := sessionstore.NewStores(db, sessionstore.Options{Limits: sessionstore.Limits{SessionMessages: 2}})
	if err != nil {
		t.Fatal(err)
	}
	api := newAPI(t, db, Options{Stores: stores})
	body := `[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"user","content":"c"}]`
	code, out, _ := do(t, api, call{method: "POST", path: "/v1/sessions/big/messages", user: "alice", body: body})
	if code != 409 || !strings.Contains(out, `"code":"limit_reached"`) || !strings.Contains(out, `"field":"messages"`) {
		t.Fatalf("%d %s", code, out)
	}
	if code, out, _ := do(t, api, call{method: "GET", path: "/v1/sessions/big/messages", user: "alice"}); code != 200 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("a refused store wrote: %d %s", code, out)
	}
	// A fork makes a session as a store does: past the limit of sessions,
	// the same 409 (it answered 201 for every fork).
	stores, err = sessionstore.NewStores(db, sessionstore.Options{Limits: sessionstore.Limits{Sessions: 1}})
	if err != nil {
		t.Fatal(err)
	}
	api = newAPI(t, db, Options{Stores: stores})
	if code, out, _ := do(t, api, call{method: "POST", path: "/v1/sessions/one/messages", user: "bob", body: body}); code != 201 {
		t.Fatalf("%d %s", code, out)
	}
	code, out, _ = do(t, api, call{method: "POST", path: "/v1/sessions/one/fork", user: "bob", body: `{}`})
	if code != 409 || !strings.Contains(out, `"code":"limit_reached"`) || !strings.Contains(out, `"field":"session_id"`) || !strings.Contains(out, "owns 1 sessions") {
		t.Fatalf("a fork past the limit of sessions: %d %s", code, out)
	}
}

// The document's info.version is the build's, as /healthz says it.
func TestOpenAPIVersionIsTheBuilds(t *testing.T) {
	t.Parallel()
	var doc struct {
		Info struct{ Version string } `json:"info"`
	}
	api := newAPI(t, dbtest.NewSQLite(t), Options{})
	code, body, _ := do(t, api, call{method: "GET", path: "/openapi.json", auth: "-"})
	if err := json.Unmarshal([]byte(body), &doc); err != nil || code != 200 {
		t.Fatalf("%d %v", code, err)
	}
	if doc.Info.Version != version.String() || doc.Info.Version == "1" {
		t.Errorf("info.version %q, the build is %q", doc.Info.Version, version.String())
	}
}

// A 404 names the session as the caller named it: it named the UUID the
// name resolved to, which the caller never saw.
func TestNotFoundNamesTheSessionAsCalled(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewSQLite(t), Options{})
	for _, c := range []call{
		{method: "GET", path: "/v1/sessions/no-such-plan", user: "alice"},
		{method: "DELETE", path: "/v1/sessions/no-such-plan", user: "alice"},
		{method: "POST", path: "/v1/sessions/no-such-plan/fork", user: "alice", body: `{}`},
	} {
		code, body, _ := do(t, api, c)
		if code != 404 || !strings.Contains(body, `session \"no-such-plan\": not found for user \"alice\"`) || uuidRE.MatchString(body) {
			t.Errorf("%s %s: %d %s", c.method, c.path, code, body)
		}
	}
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-`)

// A header that says who acts, where, or which write it is, given twice,
// is refused naming it: the first won without a word.
func TestRepeatedHeadersRefused(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewSQLite(t), Options{})
	for _, h := range []string{"X-User-Id", "X-Session-Id", "Idempotency-Key", ExpectLastHeader, "Authorization"} {
		r := httptest.NewRequest("POST", "/v1/messages", strings.NewReader(`[{"role":"user","content":"hi"}]`))
		r.Header.Set("Authorization", "Bearer "+key)
		r.Header.Set("X-User-Id", "bob")
		r.Header.Set("X-Session-Id", "s")
		r.Header[h] = []string{"one", "two"}
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"field":"`+h+`"`) {
			t.Errorf("%s twice: %d %s", h, w.Code, w.Body.String())
		}
	}
}

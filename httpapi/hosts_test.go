package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/signin"
	"github.com/remstore/remstore/sessionstore"
)

func TestAllowedHosts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr  string
		extra []string
		want  []string
	}{
		{"127.0.0.1:8088", nil, []string{"localhost", "127.0.0.1", "::1", "127.0.0.1"}},
		{"localhost:8088", []string{"ui.example"}, []string{"ui.example", "localhost", "127.0.0.1", "::1", "localhost"}},
		{"[::1]:8088", nil, []string{"localhost", "127.0.0.1", "::1", "::1"}},
		{"10.0.0.5:8088", nil, []string{"10.0.0.5"}},
		{"0.0.0.0:8088", nil, nil},
		{":8088", nil, nil},
		{"0.0.0.0:8088", []string{"a.example,b.example"}, []string{"a.example", "b.example"}},
	} {
		if got := AllowedHosts(c.addr, c.extra); !slices.Equal(got, c.want) {
			t.Errorf("%s %v: %v, want %v", c.addr, c.extra, got, c.want)
		}
	}
}

// DNS rebinding: with the quick start's --insecure-no-auth, a page whose
// name was rebound to 127.0.0.1 could sign in as anyone and read everything.
// Every route refuses a Host that is not the server's; every POST, PATCH and
// DELETE from another site's page is refused; the server's own names, and
// clients that send no Origin, still work.
func TestDNSRebindingAndCrossSiteRefused(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{Insecure: true, UI: true, AllowedHosts: AllowedHosts("127.0.0.1:18090", []string{"remstore.example"})})
	send := func(method, path, host, origin, body string) int {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Host = host
		r.Header.Set("X-User-Id", "alice")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if method != "GET" {
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	store := `{"messages":[{"role":"user","content":"hi"}]}`
	for _, c := range []struct {
		method, path, host, origin, body string
		want                             int
	}{
		{"GET", "/v1/sessions", "rebind.attacker.example:18090", "", "", http.StatusMisdirectedRequest},
		{"GET", "/ui/login", "rebind.attacker.example:18090", "", "", http.StatusMisdirectedRequest},
		{"POST", "/ui/login", "rebind.attacker.example:18090", "http://rebind.attacker.example:18090", "user=alice", http.StatusMisdirectedRequest},
		{"GET", "/v1/lookup?key=session-00000000-0000-0000-0000-000000000000-msg-1", "REBIND.attacker.example", "", "", http.StatusMisdirectedRequest},
		{"GET", "/healthz", "evil.example", "", "", http.StatusMisdirectedRequest},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "https://evil.example", store, http.StatusForbidden},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "null", store, http.StatusForbidden},
		{"DELETE", "/v1/sessions/s", "localhost:18090", "https://evil.example", "", http.StatusForbidden},
		// Another port of this machine is another site (issue 42, low).
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "http://localhost:3000", store, http.StatusForbidden},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "http://127.0.0.1:5173", store, http.StatusForbidden},
		{"DELETE", "/v1/sessions/s", "localhost:18090", "http://[::1]:8000", "", http.StatusForbidden},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "http://localhost:18090", store, http.StatusCreated},
		// The server's own names.
		{"GET", "/v1/sessions", "127.0.0.1:18090", "", "", http.StatusOK},
		{"GET", "/v1/sessions", "localhost:18090", "", "", http.StatusOK},
		{"GET", "/v1/sessions", "[::1]:18090", "", "", http.StatusOK},
		{"GET", "/v1/sessions", "remstore.example", "", "", http.StatusOK},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "", store, http.StatusCreated},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "http://127.0.0.1:18090", store, http.StatusCreated},
		{"POST", "/v1/sessions/s/messages", "127.0.0.1:18090", "https://remstore.example", store, http.StatusCreated},
	} {
		if got := send(c.method, c.path, c.host, c.origin, c.body); got != c.want {
			t.Errorf("%s %s Host %s Origin %q: %d, want %d", c.method, c.path, c.host, c.origin, got, c.want)
		}
	}
}

// Behind a trusted proxy that keeps the upstream Host, a browser's POST
// from the public name passes when the proxy names it in X-Forwarded-Host;
// the same header from anyone else changes nothing.
func TestCrossSiteCheckBehindAProxy(t *testing.T) {
	t.Parallel()
	proxies, _ := ParseTrustedProxies([]string{"loopback"})
	s := newAPI(t, dbtest.NewSQLite(t), Options{Insecure: true, TrustedProxies: proxies, AllowedHosts: AllowedHosts("127.0.0.1:8088", []string{"remstore.example.com"})})
	for _, c := range []struct {
		remote, name string
		want         int
	}{{"127.0.0.1:5000", "remstore.example.com", http.StatusCreated},
		// Not from the proxy: its X-Forwarded-Host is not believed, so it
		// neither names the public host nor is checked as one.
		{"192.0.2.1:5000", "rebind.attacker.example", http.StatusForbidden},
		// A page whose name was rebound to the proxy's address: its name
		// arrives in X-Forwarded-Host, and is not this server's.
		{"127.0.0.1:5000", "rebind.attacker.example", http.StatusMisdirectedRequest}} {
		r := httptest.NewRequest("POST", "/v1/sessions/p/messages", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
		r.RemoteAddr, r.Host = c.remote, "127.0.0.1:8088"
		r.Header.Set("Origin", "https://"+c.name)
		r.Header.Set("X-Forwarded-Host", c.name)
		r.Header.Set("X-User-Id", "alice")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("from %s: %d, want %d: %s", c.remote, w.Code, c.want, w.Body)
		}
	}
}

// GET /v1/search: the same search as the viewer and the CLI, the caller's
// sessions only, bad input a 400 naming the field.
func TestSearchRoute(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{})
	if code, body, _ := do(t, s, call{method: "POST", path: "/v1/sessions/trip/messages", user: "alice",
		body: `{"messages":[{"role":"user","content":"Plan Lisbon"},{"role":"tool","content":"{}","tool_call_id":"c","tool_name":"get_weather"}]}`}); code != http.StatusCreated {
		t.Fatalf("store: %d %s", code, body)
	}
	for _, c := range []struct {
		path, user string
		code       int
		want       string
	}{
		{"/v1/search?q=LISBON", "alice", 200, `"session_name":"trip","role":"user"`},
		{"/v1/search?q=weather&in=tool", "alice", 200, `"tool_name":"get_weather"`},
		{"/v1/search?q=lisbon", "bob", 200, `{"hits":[],"more":false}`},
		{"/v1/search?q=x&in=all", "alice", 400, `"field":"in"`},
		{"/v1/search?q=", "alice", 400, `"field":"q"`},
		{"/v1/search?q=x&limit=many", "alice", 400, `"field":"limit"`},
		{"/v1/search?q=LISBON&role=user&session=trip&after=2000-01-01T00:00:00Z", "alice", 200, `"session_name":"trip","role":"user"`},
		{"/v1/search?q=LISBON&role=tool", "alice", 200, `{"hits":[],"more":false}`},
		{"/v1/search?q=x&offset=many", "alice", 400, `"field":"offset"`},
		{"/v1/search?q=x&role=robot", "alice", 400, `"field":"role"`},
		{"/v1/search?q=x&after=yesterday", "alice", 400, `"field":"after"`},
		{"/v1/search?q=LISBON&tool=weather", "alice", 200, `{"hits":[],"more":false}`}, // the user's message is no tool's
		{"/v1/search?q=get&in=tool&tool=WEATHER", "alice", 200, `"tool_name":"get_weather"`},
		{"/v1/search?q=x&tool=%00", "alice", 400, `"field":"tool"`},
		// Each names the parameter the caller gave: the session is
		// session= (not the CLI's --session-id), the key searched is q=.
		{"/v1/search?q=x&session=%00", "alice", 400, `"field":"session"`},
		{"/v1/search?q=x&session=" + strings.Repeat("s", 600), "alice", 400, `"field":"session"`},
		{"/v1/search?q=not-a-key&in=key", "alice", 400, `"field":"q"`},
	} {
		code, body, _ := do(t, s, call{method: "GET", path: c.path, user: c.user})
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s as %s: %d %s; want %d with %s", c.path, c.user, code, body, c.code, c.want)
		}
	}
}

// A search has a budget of its own (issue 42 M3): one running search per
// user, MaxSearches in all, answered 429 at once beyond; each bounded by
// SearchTimeout (503 timeout), stores and loads untouched.
func TestSearchBudget(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	s := newAPI(t, db, Options{MaxSearches: 2})
	sendAs := func(k, method, path, user, body string) (int, string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+k)
		if user != "" {
			r.Header.Set("X-User-Id", user)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	send := func(method, path, user, body string) (int, string) { return sendAs(key, method, path, user, body) }
	if code, _ := send("POST", "/v1/sessions/s/messages", "alice", `[{"role":"user","content":"find lisbon"}]`); code != 201 {
		t.Fatal(code)
	}
	search := "/v1/search?q=lisbon"
	if code, body := send("GET", search, "alice", ""); code != 200 || !strings.Contains(body, "lisbon") {
		t.Fatalf("search: %d %s", code, body)
	}
	// A key not bound to one user pays for every user it names: 16 forged
	// X-User-Ids behind one key took 16 searches' share.
	now := time.Now().Add(time.Hour)                 // past the rest the first search earned
	if ok, _ := s.searches.take("key 0", now); !ok { // a search on the unbound key is running
		t.Fatal("the key's running search: refused")
	}
	for _, user := range []string{"alice", "bob", "mallory-17"} {
		if code, body := send("GET", search, user, ""); code != 429 || !strings.Contains(body, "too_many_searches") {
			t.Fatalf("%s's search on the busy unbound key: %d %s", user, code, body)
		}
	}
	// A key bound to alice pays for alice alone.
	if code, _ := sendAs("alice-only-0123456789", "GET", search, "", ""); code != 200 {
		t.Fatalf("alice's search on her own key: %d", code)
	}
	time.Sleep(10 * time.Millisecond)         // that search earned alice a rest of 4x its time
	s.searches.take("user carol", time.Now()) // two running: the budget is spent
	if code, _ := sendAs("alice-only-0123456789", "GET", search, "", ""); code != 429 {
		t.Fatalf("alice's search over the budget: %d", code)
	}
	if code, _ := send("GET", "/v1/sessions/s/messages", "alice", ""); code != 200 {
		t.Fatalf("a load beside the searches: %d", code)
	}
	if code, _ := send("POST", "/v1/sessions/s/messages", "alice", `[{"role":"user","content":"more"}]`); code != 201 {
		t.Fatalf("a store beside the searches: %d", code)
	}
	s.searches.done("key 0", time.Now(), 0)
	s.searches.done("user carol", time.Now(), 0)
	// The share of the time: a search of 1 s spends the 250 ms of credit
	// and 750 ms more, earned back at a fifth of the clock's pace (the 200
	// ms earned during the search capped at the credit): at 2 s dave owes
	// 550 ms, which takes 2.75 s to earn.
	s.searches.take("dave", now)
	s.searches.done("dave", now.Add(time.Second), time.Second)
	if ok, retry := s.searches.take("dave", now.Add(2*time.Second)); ok || retry != 2751*time.Millisecond {
		t.Fatalf("dave owing: %v, retry in %v", ok, retry)
	}
	if ok, _ := s.searches.take("dave", now.Add(5*time.Second)); !ok {
		t.Fatal("dave with his credit back: refused")
	}
	// The time budget: a search that cannot finish in it is a timeout.
	quick := newAPI(t, db, Options{SearchTimeout: time.Nanosecond})
	r := httptest.NewRequest("GET", search, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set("X-User-Id", "alice")
	w := httptest.NewRecorder()
	quick.ServeHTTP(w, r)
	if w.Code != 503 || !strings.Contains(w.Body.String(), `"timeout"`) {
		t.Fatalf("a search past its time: %d %s", w.Code, w.Body.String())
	}
}

// Wrong bearer keys (issue 42 M5): after signin.Failures from one network,
// its requests get 429 without a check until the window ends, the right key
// too; another network is not affected; a missing key is not a guess.
func TestWrongKeysAreSlowed(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{})
	send := func(addr, auth string) int {
		r := httptest.NewRequest("GET", "/v1/sessions", nil)
		r.RemoteAddr = addr
		if auth != "" {
			r.Header.Set("Authorization", "Bearer "+auth)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		return w.Code
	}
	for range 10 {
		if code := send("192.0.2.9:1000", ""); code != 401 {
			t.Fatalf("no key: %d", code)
		}
	}
	if code := send("192.0.2.9:1000", key); code != 200 {
		t.Fatalf("missing keys counted as guesses: %d", code)
	}
	codes := map[int]int{}
	for i := range 300 {
		codes[send(fmt.Sprintf("[2001:db8::%x]:1000", i+1), fmt.Sprintf("wrong-key-%d-0123456789", i))]++
	}
	if codes[401] != signin.Failures || codes[429] != 300-signin.Failures {
		t.Fatalf("300 wrong keys from one /64: %v", codes)
	}
	if code := send("[2001:db8::ffff]:1000", key); code != 429 {
		t.Fatalf("the right key from the guessing network: %d", code)
	}
	if code := send("192.0.2.10:1000", key); code != 200 {
		t.Fatalf("the right key from another network: %d", code)
	}
}

// A store answered while storage is off says so (issue 43): stored 0 and
// X-Remstore-Storage: off.
func TestStoreWithStorageOffSaysSo(t *testing.T) {
	t.Parallel()
	db := dbtest.NewSQLite(t)
	stores, err := sessionstore.NewStores(db, sessionstore.Options{Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	s := newAPI(t, db, Options{Stores: stores})
	r := httptest.NewRequest("POST", "/v1/sessions/s/messages", strings.NewReader(`[{"role":"user","content":"hi"}]`))
	r.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 201 || !strings.Contains(w.Body.String(), `"stored":0`) || w.Header().Get(StorageHeader) != "off" {
		t.Fatalf("%d %s %v", w.Code, w.Body.String(), w.Header())
	}
}

// A key sent without "Bearer " is told so, not taken for no key (issue 43).
func TestKeyWithoutScheme(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{})
	for auth, want := range map[string]string{key: "the Bearer scheme is missing", "": "missing API key", "Bearer nope-0123456789abcdef": "REMSTORE_API_KEYS"} {
		r := httptest.NewRequest("GET", "/v1/sessions", nil)
		r.RemoteAddr = "192.0.2.77:1"
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != 401 || !strings.Contains(w.Body.String(), want) {
			t.Errorf("Authorization %q: %d %s, want 401 with %q", auth, w.Code, w.Body.String(), want)
		}
	}
}

// A user sending searches back to back, each as long as it may be, gets
// a fifth of the time (and the credit): searches of 29 ms, which a free
// allowance of 50 ms a search let run without pause, and of 1 s. A few in
// a row from full credit are never refused.
func TestSearchGateShare(t *testing.T) {
	for _, took := range []time.Duration{29 * time.Millisecond, time.Second} {
		g, start := newSearchGate(4), time.Now()
		now, busy := start, time.Duration(0)
		for now.Sub(start) < 100*time.Second {
			ok, retry := g.take("flooder", now)
			if !ok {
				now = now.Add(retry)
				continue
			}
			now = now.Add(took)
			g.done("flooder", now, took)
			busy += took
		}
		if share := float64(busy) / float64(now.Sub(start)); share < 0.19 || share > 0.21+float64(searchCredit)/float64(now.Sub(start)) {
			t.Errorf("searches of %v back to back: %.3f of the time, want a fifth", took, share)
		}
	}
	g, now := newSearchGate(4), time.Now()
	for i := range 5 { // five 40 ms searches in a row: 200 ms of 250 ms credit (and 40 earned)
		if ok, retry := g.take("agent", now); !ok {
			t.Fatalf("search %d in a row: refused, retry in %v", i, retry)
		}
		now = now.Add(40 * time.Millisecond)
		g.done("agent", now, 40*time.Millisecond)
	}
}

package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/sessionstore"
)

// soakFor is REMSTORE_SOAK (default 5s; `make soak` runs 10 minutes).
func soakFor() time.Duration {
	if v, err := time.ParseDuration(os.Getenv("REMSTORE_SOAK")); err == nil {
		return v
	}
	return 5 * time.Second
}

const soakKey = "soak-key-0123456789abcdef"

// apiSoak is one run of TestAPISoak: the server, and what its clients saw.
type apiSoak struct {
	t    *testing.T
	base string
	c    *http.Client
	ctx  context.Context

	mu      sync.Mutex
	status  map[string]map[int]int // op -> status -> count
	bad     []string               // 5xx, transport errors, wrong answers
	acked   map[string][]string    // tenant/session -> acknowledged contents, in ack order per writer
	sids    map[string]string      // tenant/session -> session UUID
	audited map[string]int         // tenant/session -> audit appends acknowledged
}

func (s *apiSoak) failf(format string, a ...any) {
	if s.ctx.Err() != nil {
		return // the run ended under the request
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bad) < 50 {
		s.bad = append(s.bad, fmt.Sprintf(format, a...))
	} else {
		s.bad[49] = "... and more"
	}
}

// do sends one request as user and returns the status and body; a 5xx or
// a transport error is a failure of the run (no fault is injected here).
func (s *apiSoak) do(op, user, method, path string, body []byte, hdr map[string]string) (int, []byte, http.Header) {
	req, _ := http.NewRequestWithContext(s.ctx, method, s.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+soakKey)
	req.Header.Set("X-User-Id", user)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return s.send(op, req)
}

func (s *apiSoak) send(op string, req *http.Request) (int, []byte, http.Header) {
	resp, err := s.c.Do(req)
	if err != nil {
		s.failf("%s %s: %v", op, req.URL.Path, err)
		return 0, nil, nil
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		s.failf("%s %s: reading the answer: %v", op, req.URL.Path, err)
		return 0, nil, nil
	}
	s.mu.Lock()
	if s.status[op] == nil {
		s.status[op] = map[int]int{}
	}
	s.status[op][resp.StatusCode]++
	s.mu.Unlock()
	if resp.StatusCode >= 500 {
		s.failf("%s %s %s: %d %s", op, req.Method, req.URL.RequestURI(), resp.StatusCode, b)
	}
	return resp.StatusCode, b, resp.Header
}

type soakMsg struct {
	Role      string `json:"role"`
	Content   string `json:"content"`
	Key       string `json:"_entity_key,omitempty"`
	Compacted bool   `json:"_compressed,omitempty"`
	ToolCall  string `json:"tool_call_id,omitempty"`
	ToolName  string `json:"tool_name,omitempty"`
}

// The whole API under concurrent load on PostgreSQL, as serve runs it
// (connection caps, the background search indexer, auditing, the viewer):
// two tenants' writers (some resending under an Idempotency-Key), guarded
// turns, loads (whole, last-N, since), lookups, pops, clears, searches,
// audit appends, session listing and viewer pages, all at once for
// REMSTORE_SOAK. No answer may be a 5xx; every acknowledged message is
// stored exactly once, in its writer's order; every key a load gave
// resolves to its own message or, once popped or cleared, to nothing; no
// search shows another tenant's words; every audit append is in its
// session's dump with its time.
func TestAPISoak(t *testing.T) {
	t.Parallel()
	d := soakFor()
	db := dbtest.NewPostgres(t)
	stores, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: 40})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	api, err := httpapi.New(httpapi.Options{Stores: stores, APIKeys: []httpapi.APIKey{{Key: soakKey}}, AuditEnabled: true, AuditDir: dir,
		UI: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := httpapi.LimitListener(ln, httpapi.DefaultMaxConns, httpapi.DefaultMaxConnsPerClient)
	srv := httpapi.HTTPServer(api, time.Minute, 10*time.Second, 30*time.Second)
	l.Attach(srv)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	s := &apiSoak{t: t, base: "http://" + ln.Addr().String(), ctx: ctx,
		c:      &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 60 * time.Second},
		status: map[string]map[int]int{}, acked: map[string][]string{}, sids: map[string]string{}, audited: map[string]int{}}
	// serve's background indexer, as serve runs it (more often: a short run)
	ictx, stopIndex := context.WithCancel(context.Background())
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		sessionstore.IndexSearchEvery(ictx, db, 100*time.Millisecond, func(err error) { s.failf("search indexer: %v", err) })
	}()
	defer func() { stopIndex(); <-indexed }()

	tenants := []string{"alice", "bob"}
	keep := func(i int) string { return fmt.Sprintf("keep-%d", i) }
	churn := func(i int) string { return fmt.Sprintf("churn-%d", i) }
	const keeps, churns = 4, 2
	// Every session exists before the run (an audit append needs one).
	for _, u := range tenants {
		for i := range keeps + churns {
			name := keep(i)
			if i >= keeps {
				name = churn(i - keeps)
			}
			code, b, _ := s.do("create", u, "POST", "/v1/sessions/"+name+"/messages", mustJSON([]soakMsg{{Role: "user", Content: u + " opens " + name}}), nil)
			var a struct {
				SessionID string `json:"session_id"`
			}
			if code != 201 || json.Unmarshal(b, &a) != nil {
				t.Fatalf("create %s/%s: %d %s", u, name, code, b)
			}
			s.sids[u+"/"+name] = a.SessionID
			if i < keeps {
				s.acked[u+"/"+name] = []string{u + " opens " + name}
			}
		}
	}

	var wg sync.WaitGroup
	var ops atomic.Int64
	loop := func(name string, seed uint64, fn func(rng *rand.Rand, n int)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for n := 0; ctx.Err() == nil; n++ {
				fn(rng, n)
				ops.Add(1)
			}
		}()
	}
	// A message's words: its tenant's marker, a token of its own, and for an
	// answer enough text to be cut (T = 40).
	body := func(u, tok string, rng *rand.Rand) []soakMsg {
		var out []soakMsg
		for i := range 1 + rng.IntN(4) {
			c := fmt.Sprintf("%s %s-%d", u+"word", tok, i)
			role := "user"
			if i%2 == 1 {
				role = "assistant"
				c += " " + strings.Repeat("lorem ipsum ", 5+rng.IntN(40)) + "end"
			}
			out = append(out, soakMsg{Role: role, Content: c})
		}
		return out
	}
	record := func(key string, msgs []soakMsg) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, m := range msgs {
			s.acked[key] = append(s.acked[key], m.Content)
		}
	}
	for wi := range 8 {
		u := tenants[wi%2]
		loop("writer", uint64(wi), func(rng *rand.Rand, n int) {
			keepSession := rng.IntN(3) > 0
			name := keep(rng.IntN(keeps))
			if !keepSession {
				name = churn(rng.IntN(churns))
			}
			msgs := body(u, fmt.Sprintf("w%dn%d", wi, n), rng)
			hdr := map[string]string{}
			resend := rng.IntN(4) == 0
			if resend {
				hdr["Idempotency-Key"] = fmt.Sprintf("ik-%d-%d", wi, n)
			}
			code, b, _ := s.do("store", u, "POST", "/v1/sessions/"+name+"/messages", mustJSON(msgs), hdr)
			if code != 201 {
				return
			}
			if resend { // the answer "lost": the same request again stores nothing
				code2, b2, _ := s.do("store resent", u, "POST", "/v1/sessions/"+name+"/messages", mustJSON(msgs), hdr)
				if code2 != 200 && code2 != 201 || !bytes.Contains(b2, []byte(`"stored":0`)) {
					if ctx.Err() == nil && code2 != 0 {
						s.failf("resend of %s: %d %s (first: %s)", name, code2, b2, b)
					}
				}
			}
			if keepSession {
				record(u+"/"+name, msgs)
			}
		})
	}
	// Guarded turns: read the last message, store after it only if it is
	// still the last (201 or 409; a 409 stores nothing).
	for gi := range 2 {
		u := tenants[gi]
		loop("guarded", uint64(100+gi), func(rng *rand.Rand, n int) {
			name := keep(rng.IntN(keeps))
			code, _, h := s.do("guarded load", u, "GET", "/v1/sessions/"+name+"/messages?last=2", nil, nil)
			if code != 200 {
				return
			}
			msgs := body(u, fmt.Sprintf("g%dn%d", gi, n), rng)
			code, b, _ := s.do("guarded store", u, "POST", "/v1/sessions/"+name+"/messages", mustJSON(msgs), map[string]string{httpapi.ExpectLastHeader: h.Get(httpapi.LastHeader)})
			switch code {
			case 201:
				record(u+"/"+name, msgs)
			case 409:
			default:
				if code != 0 {
					s.failf("guarded store: %d %s", code, b)
				}
			}
		})
	}
	// Loads of every shape, and lookups of the keys they give.
	for li := range 4 {
		u := tenants[li%2]
		loop("loader", uint64(200+li), func(rng *rand.Rand, n int) {
			name := keep(rng.IntN(keeps))
			if rng.IntN(3) == 0 {
				name = churn(rng.IntN(churns))
			}
			q := []string{"", "?last=5", "?since=" + url.QueryEscape(time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)), "?format=pydantic-ai"}[rng.IntN(4)]
			code, b, _ := s.do("load", u, "GET", "/v1/sessions/"+name+"/messages"+q, nil, nil)
			if code != 200 || strings.Contains(q, "pydantic") {
				return
			}
			var msgs []soakMsg
			if err := json.Unmarshal(b, &msgs); err != nil {
				s.failf("load %s%s: not a list of messages: %v", name, q, err)
				return
			}
			for _, m := range msgs {
				if !strings.Contains(m.Content, "word") && !strings.Contains(m.Content, " opens ") {
					s.failf("load %s as %s: a message no one stored: %q", name, u, m.Content)
				}
				if !strings.HasPrefix(m.Content, u) {
					s.failf("load %s as %s: another tenant's message: %q", name, u, m.Content)
				}
				if m.Key == "" || !m.Compacted || rng.IntN(3) > 0 {
					continue
				}
				code, lb, _ := s.do("lookup", u, "GET", "/v1/lookup?key="+url.QueryEscape(m.Key), nil, nil)
				var got struct{ Content string }
				switch {
				case code == 200 && json.Unmarshal(lb, &got) == nil && strings.HasPrefix(got.Content, m.Content[:40]):
				case code == 404 && strings.HasPrefix(name, "churn"): // popped or cleared since
				case code == 0:
				default:
					s.failf("lookup %s (%s): %d %s, the load showed %q", m.Key, name, code, lb, m.Content)
				}
			}
		})
	}
	// Pops and clears on the churn sessions.
	for pi := range 2 {
		u := tenants[pi]
		loop("popper", uint64(300+pi), func(rng *rand.Rand, n int) {
			name := churn(rng.IntN(churns))
			if rng.IntN(8) == 0 {
				s.do("clear", u, "DELETE", "/v1/sessions/"+name+"/messages", nil, nil)
			} else {
				s.do("pop", u, "DELETE", "/v1/sessions/"+name+"/messages/last", nil, nil)
			}
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
		})
	}
	// Searches: a tenant's marker finds its own messages, never the other's.
	for qi := range 2 {
		u, other := tenants[qi], tenants[1-qi]
		loop("searcher", uint64(400+qi), func(rng *rand.Rand, n int) {
			word := u + "word"
			if rng.IntN(2) == 0 {
				word = other + "word"
			}
			code, b, h := s.do("search", u, "GET", "/v1/search?q="+word+"&limit=20", nil, nil)
			switch {
			case code == 200 && word != u+"word" && !bytes.Contains(b, []byte(`"hits":[]`)):
				s.failf("%s's search for %q found another tenant's messages: %s", u, word, b)
			case code == 429:
				if ra := h.Get("Retry-After"); ra != "" {
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	// Audit appends, session listing.
	for ai := range 2 {
		u := tenants[ai]
		loop("auditor", uint64(500+ai), func(rng *rand.Rand, n int) {
			name := keep(rng.IntN(keeps))
			code, b, _ := s.do("audit", u, "POST", "/v1/sessions/"+name+"/audit",
				mustJSON(map[string]any{"agent_name": "soak", "prompt": fmt.Sprintf("p%d", n), "history": []soakMsg{{Role: "user", Content: "q"}}}), nil)
			if code == 200 || code == 201 {
				if !bytes.Contains(b, []byte(`"recorded":true`)) {
					s.failf("audit %s: %s", name, b)
				}
				s.mu.Lock()
				s.audited[u+"/"+name]++
				s.mu.Unlock()
			}
			s.do("list", u, "GET", "/v1/sessions?limit=50", nil, nil)
			time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
		})
	}
	// The viewer, signed in as a browser is.
	for vi := range 2 {
		u := tenants[vi]
		b := s.browser(u)
		if b == nil {
			break
		}
		loop("viewer", uint64(600+vi), func(rng *rand.Rand, n int) {
			name := keep(rng.IntN(keeps))
			page := []string{"/ui/sessions", "/ui/sessions/" + name, "/ui/sessions/" + name + "/audit", "/ui/search?q=" + u + "word", "/ui/sessions/" + name + "/json"}[rng.IntN(5)]
			req, _ := http.NewRequestWithContext(ctx, "GET", s.base+page, nil)
			resp, err := b.Do(req)
			if err != nil {
				s.failf("viewer %s: %v", page, err)
				return
			}
			pb, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			s.mu.Lock()
			if s.status["viewer"] == nil {
				s.status["viewer"] = map[int]int{}
			}
			s.status["viewer"][resp.StatusCode]++
			s.mu.Unlock()
			if resp.StatusCode != 200 && resp.StatusCode != 429 {
				s.failf("viewer %s as %s: %d %.200s", page, u, resp.StatusCode, pb)
			}
			if bytes.Contains(pb, []byte(tenants[1-vi]+"word")) {
				s.failf("viewer %s as %s shows the other tenant's words", page, u)
			}
		})
	}
	wg.Wait()
	stopIndex()
	<-indexed
	for _, b := range s.bad {
		t.Error(b)
	}
	s.check(tenants, keeps, churns, keep, churn, dir)
	var lines []string
	for op, st := range s.status {
		var parts []string
		for code, n := range st {
			parts = append(parts, fmt.Sprintf("%d×%d", n, code))
		}
		sort.Strings(parts)
		lines = append(lines, op+" "+strings.Join(parts, " "))
	}
	sort.Strings(lines)
	t.Logf("%s, %d operations: %s", d, ops.Load(), strings.Join(lines, "; "))
}

// check reads back what was acknowledged, after the run, with a client of
// its own (the run's context has ended).
func (s *apiSoak) check(tenants []string, keeps, churns int, keep, churn func(int) string, dir string) {
	t := s.t
	s.ctx = context.Background()
	load := func(u, name, q string) []soakMsg {
		code, b, _ := s.do("check", u, "GET", "/v1/sessions/"+name+"/messages"+q, nil, nil)
		var msgs []soakMsg
		if code != 200 || json.Unmarshal(b, &msgs) != nil {
			t.Fatalf("load %s/%s%s after the run: %d %s", u, name, q, code, b)
		}
		return msgs
	}
	stored := 0
	for _, u := range tenants {
		for i := range keeps + churns {
			name := keep(i)
			if i >= keeps {
				name = churn(i - keeps)
			}
			full, comp := load(u, name, "?compress=false"), load(u, name, "")
			if len(full) != len(comp) {
				t.Fatalf("%s/%s: %d messages whole, %d compressed", u, name, len(full), len(comp))
			}
			seen := map[string]bool{}
			for j, m := range full {
				if seen[m.Content] {
					t.Errorf("%s/%s: %q stored twice", u, name, m.Content)
				}
				seen[m.Content] = true
				// Every key resolves to its own message.
				if k := comp[j].Key; k != "" {
					code, b, _ := s.do("check", u, "GET", "/v1/lookup?key="+url.QueryEscape(k), nil, nil)
					var got struct{ Content string }
					if code != 200 || json.Unmarshal(b, &got) != nil || got.Content != m.Content {
						t.Errorf("%s/%s: key %s answers %d %.120s, not its message", u, name, k, code, b)
					}
				}
			}
			if i >= keeps {
				continue
			}
			// Every acknowledged message once, in its writer's order.
			stored += len(full)
			pos := map[string]int{}
			for j, m := range full {
				pos[m.Content] = j
			}
			last := map[string]int{}
			for _, c := range s.acked[u+"/"+name] {
				p, ok := pos[c]
				if !ok {
					t.Errorf("%s/%s: acknowledged %q is not stored", u, name, c)
					continue
				}
				w := strings.SplitN(c, "n", 2)[0] // a writer's tokens: "<tenant>word w3n..."
				if q, ok := last[w]; ok && p < q {
					t.Errorf("%s/%s: %q stored before an earlier acknowledged message of its writer", u, name, c)
				}
				last[w] = p
			}
			// The session's audit dump: every append, each with its time.
			sid := s.sids[u+"/"+name]
			f, err := audit.Read(dir, sid)
			if n := s.audited[u+"/"+name]; n > 0 {
				if err != nil {
					t.Errorf("%s/%s: the audit dump of session %s: %v", u, name, sid, err)
					continue
				}
				if len(f.Invocations) < n {
					t.Errorf("%s/%s: %d audit appends acknowledged, %d in the dump", u, name, n, len(f.Invocations))
				}
				for _, inv := range f.Invocations {
					ts, _ := inv["timestamp"].(string)
					at, err := time.Parse(time.RFC3339Nano, ts)
					if err != nil || time.Since(at) > time.Hour {
						t.Errorf("%s/%s: an audit append's timestamp %q", u, name, ts)
						break
					}
				}
			}
		}
	}
	// What the search indexer left: every tenant's marker found, after a
	// last catch-up, by that tenant only.
	for _, u := range tenants {
		code, b, _ := s.do("check", u, "GET", "/v1/search?q="+u+"word&limit=5", nil, nil)
		for try := 0; code == http.StatusTooManyRequests && try < 20; try++ {
			// The run's own searches may have used the tenant's share of
			// the server: honour the 429 as a client would.
			time.Sleep(time.Second)
			code, b, _ = s.do("check", u, "GET", "/v1/search?q="+u+"word&limit=5", nil, nil)
		}
		if code != 200 || bytes.Contains(b, []byte(`"hits":[]`)) {
			t.Errorf("%s's search for its own words after the run: %d %.200s", u, code, b)
		}
	}
	if stored < 50 {
		t.Errorf("the soak stored only %d messages in its kept sessions", stored)
	}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// browser signs a browser in to the viewer as user and returns its client.
func (s *apiSoak) browser(user string) *http.Client {
	jar, _ := cookiejar.New(nil)
	b := &http.Client{Jar: jar, Transport: s.c.Transport, Timeout: 60 * time.Second}
	resp, err := b.Get(s.base + "/ui/login")
	if err != nil {
		s.t.Fatalf("viewer sign-in page: %v", err)
	}
	page, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	m := csrfField.FindSubmatch(page)
	if m == nil {
		s.t.Fatalf("viewer sign-in page has no CSRF field: %.300s", page)
	}
	resp, err = b.PostForm(s.base+"/ui/login", url.Values{"csrf": {string(m[1])}, "key": {soakKey}, "user": {user}, "next": {"/ui/sessions"}})
	if err != nil {
		s.t.Fatalf("viewer sign-in: %v", err)
	}
	page, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != 200 || !slices.ContainsFunc(jar.Cookies(resp.Request.URL), func(c *http.Cookie) bool { return c.Value != "" }) {
		s.t.Fatalf("viewer sign-in as %s: %d %.300s", user, resp.StatusCode, page)
	}
	return b
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

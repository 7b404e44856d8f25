package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/viewer"
)

// postLogin posts the sign-in form as a fresh browser would (its CSRF token
// and the login cookie that carries it) and returns the response unfollowed.
func (f *fixture) postLogin(t *testing.T, key, user string) *http.Response {
	t.Helper()
	page := get(t, &http.Client{}, f.srv.URL+"/ui/login", http.StatusOK)
	tok := csrfField.FindStringSubmatch(page)[1]
	req, _ := http.NewRequest("POST", f.srv.URL+"/ui/login", strings.NewReader(url.Values{"csrf": {tok}, "key": {key}, "user": {user}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "remstore_ui_login", Value: tok})
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// The viewer over HTTP, as a browser without JavaScript meets it: headers,
// sign-in, CSRF, the user's own data only, and hostile strings as text.
func TestViewerHTTP(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	t.Run("headers and sign-in", func(t *testing.T) {
		resp, err := http.Get(f.srv.URL + "/ui/sessions")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Request.URL.Path != "/ui/login" {
			t.Errorf("signed-out page went to %s, want the sign-in form", resp.Request.URL)
		}
		for h, want := range map[string]string{"Content-Security-Policy": viewer.CSP, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"} {
			if got := resp.Header.Get(h); got != want {
				t.Errorf("%s = %q, want %q", h, got, want)
			}
		}
		if strings.Contains(viewer.CSP, "unsafe-inline") || !strings.Contains(viewer.CSP, "script-src 'self'") {
			t.Errorf("CSP allows inline script: %s", viewer.CSP)
		}
		// The API itself still wants its bearer key.
		if resp, _ := http.Get(f.srv.URL + "/v1/sessions"); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("API without a key: %d", resp.StatusCode)
		}
	})

	t.Run("cookie flags", func(t *testing.T) {
		c, _ := f.client(t, aliceKey, "")
		u, _ := url.Parse(f.srv.URL + "/ui/")
		cs := c.Jar.Cookies(u)
		if len(cs) != 1 || cs[0].Name != "remstore_ui" {
			t.Fatalf("cookies after sign-in: %v", cs)
		}
		// The jar hides the attributes; read them off a fresh sign-in.
		resp := f.postLogin(t, aliceKey, "")
		var set string
		for _, h := range resp.Header.Values("Set-Cookie") {
			if strings.HasPrefix(h, "remstore_ui=") {
				set = h
			}
		}
		for _, attr := range []string{"HttpOnly", "SameSite=Strict", "Path=/ui/"} {
			if !strings.Contains(set, attr) {
				t.Errorf("session cookie %q lacks %s", set, attr)
			}
		}
	})

	t.Run("sign-in refusals", func(t *testing.T) {
		// A wrong key, a bound key asking for another user, a form without
		// the login cookie's token: none signs in.
		for _, tc := range []struct{ key, user, want string }{
			{"wrong-key-0123456789abcdef", "", "unknown API key"},
			{aliceKey, "bob", "may not act for that user"},
		} {
			resp := f.postLogin(t, tc.key, tc.user)
			if loc := resp.Header.Get("Location"); !strings.Contains(loc, url.QueryEscape(tc.want)) {
				t.Errorf("key %q user %q: redirected to %q, want the form with %q", tc.key, tc.user, loc, tc.want)
			}
		}
		// The form shows the sign-in's own messages only, not a crafted one.
		if page := get(t, &http.Client{}, f.srv.URL+"/ui/login?error=unknown+API+key", http.StatusOK); !strings.Contains(page, "unknown API key") {
			t.Errorf("sign-in error not shown")
		}
		if page := get(t, &http.Client{}, f.srv.URL+"/ui/login?error=Your+key+expired,+call+us", http.StatusOK); strings.Contains(page, "call us") {
			t.Errorf("a crafted error text is shown on the sign-in page")
		}
		resp, err := http.PostForm(f.srv.URL+"/ui/login", url.Values{"csrf": {"x"}, "key": {aliceKey}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("sign-in without the CSRF cookie: %d, want 403", resp.StatusCode)
		}
	})

	t.Run("own data only", func(t *testing.T) {
		c, csrf := f.client(t, aliceKey, "")
		list := get(t, c, f.srv.URL+"/ui/sessions", http.StatusOK)
		if !strings.Contains(list, f.alice.String()) || strings.Contains(list, f.bob.String()) {
			t.Errorf("alice's list: has her session %v, has bob's %v", strings.Contains(list, f.alice.String()), strings.Contains(list, f.bob.String()))
		}
		get(t, c, f.srv.URL+"/ui/sessions/"+f.bob.String(), http.StatusNotFound)
		get(t, c, f.srv.URL+"/ui/sessions/"+f.bob.String()+"/audit", http.StatusNotFound)
		bobKeyText := strings.Replace(f.key, f.alice.String(), f.bob.String(), 1)
		get(t, c, f.srv.URL+"/ui/lookup?key="+url.QueryEscape(strings.Replace(bobKeyText, "msg-2", "msg-1", 1)), http.StatusNotFound)
		// Her own key recovers the full text.
		var got struct {
			Content string
			Parts   []struct{ T, C string }
		}
		if err := json.Unmarshal([]byte(get(t, c, f.srv.URL+"/ui/lookup?key="+url.QueryEscape(f.key), http.StatusOK)), &got); err != nil || got.Content != f.long ||
			len(got.Parts) != 3 || got.Parts[0].T+"\u202e"+got.Parts[2].T != f.long || got.Parts[1].C != "U+202E" {
			t.Errorf("lookup of her key: %+v, %v", got, err)
		}
		// The audit page shows her two calls, from her session's dump, not
		// bob's call in his.
		a := get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String()+"/audit?a=0&b=1", http.StatusOK)
		if strings.Contains(a, "bob&#39;s prompt") || strings.Contains(a, "bob's prompt") || !strings.Contains(a, "second prompt") {
			t.Errorf("audit page shows bob's call or misses hers")
		}
		if !strings.Contains(a, "<code>"+f.alice.String()+".yaml</code>") {
			t.Errorf("audit page does not name her dump file")
		}
		// First call saw 2 whole messages; the second 6, two of them cut
		// (the 130-character plan and the 1 MB line, T = 10): 4 added, 0
		// cut among the 2 both saw, nothing dropped.
		if !strings.Contains(a, "4 added, 0 cut, 0 dropped, 2 unchanged") {
			t.Errorf("diff summary missing: %.2000s", a[strings.Index(a, "<main>"):])
		}
		// A POST without the CSRF token is refused; with it, it works.
		resp, err := c.PostForm(f.srv.URL+"/ui/logout", url.Values{})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("logout without CSRF: %d, want 403", resp.StatusCode)
		}
		resp, err = c.PostForm(f.srv.URL+"/ui/logout", url.Values{"csrf": {csrf}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Request.URL.Path != "/ui/login" {
			t.Errorf("after logout: %s", resp.Request.URL)
		}
		get(t, c, f.srv.URL+"/ui/lookup?key="+url.QueryEscape(f.key), http.StatusUnauthorized)
	})

	t.Run("pages and compaction", func(t *testing.T) {
		c, _ := f.client(t, aliceKey, "")
		first := get(t, c, f.srv.URL+"/ui/sessions?limit=1", http.StatusOK)
		m := regexp.MustCompile(`href="(/ui/sessions\?[^"]*cursor=[^"]*)" id="next"`).FindStringSubmatch(first)
		if m == nil {
			t.Fatalf("no next page on a 1-session page of 2")
		}
		second := get(t, c, f.srv.URL+html.UnescapeString(m[1]), http.StatusOK)
		one, two := strings.Contains(first, f.notes.String()), strings.Contains(second, f.notes.String())
		if one == two || strings.Contains(first, f.alice.String()) == strings.Contains(second, f.alice.String()) {
			t.Errorf("the two pages do not split her two sessions: notes on %v/%v", one, two)
		}
		notes := get(t, c, f.srv.URL+"/ui/sessions/"+f.notes.String(), http.StatusOK)
		// The summary comes first, with the range it replaces (6 stored,
		// the last 2 kept: positions 0-3); at T = 10 its text is cut too.
		if !strings.Contains(notes, "Compaction summary: replaces 4 messages, positions 0–3.") {
			i := strings.Index(notes, `id="messages"`)
			t.Errorf("compacted session: summary or its range missing: %.1500s", notes[max(i, 0):])
		}
		if n := strings.Count(notes, `class="msg `); n != 3 {
			t.Errorf("compacted session shows %d messages, want the summary and the last 2", n)
		}
	})

	t.Run("a long session is drawn a page at a time", func(t *testing.T) {
		carol, err := sessionstore.New(f.db, sessionstore.Options{UserID: "carol", TruncateLength: viewerT})
		if err != nil {
			t.Fatal(err)
		}
		var many []models.HistoryMessage
		for i := range 1203 {
			many = append(many, models.HistoryMessage{Role: "user", Content: fmt.Sprintf("line %d", i)})
		}
		r, err := carol.Store(context.Background(), "long", many, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := f.client(t, openKey, "carol")
		base := f.srv.URL + "/ui/sessions/" + r.SessionID.String()
		// 500 a page: 1-500, then 501-1000, then 1001-1203; the totals
		// count all 1,203 on every page.
		for _, tc := range []struct {
			from       string
			n          int
			window     string
			first      string
			prev, next bool
		}{{"", 500, "1–500 of 1,203", "line 0", false, true}, {"?from=500", 500, "501–1,000 of 1,203", "line 500", true, true},
			{"?from=1000", 203, "1,001–1,203 of 1,203", "line 1000", true, false}, {"?from=99999", 1, "1,203–1,203 of 1,203", "line 1202", true, false}} {
			body := get(t, c, base+tc.from, http.StatusOK)
			if n := strings.Count(body, `class="msg `); n != tc.n {
				t.Errorf("from %q: %d messages drawn, want %d", tc.from, n, tc.n)
			}
			if !strings.Contains(body, tc.window) || !strings.Contains(body, "1,203 messages") {
				t.Errorf("from %q: window %q or the total missing", tc.from, tc.window)
			}
			if tc.first != "" && !strings.Contains(body, ">"+tc.first+"</pre>") {
				t.Errorf("from %q: first message %q missing", tc.from, tc.first)
			}
			if strings.Contains(body, `class="prev"`) != tc.prev || strings.Contains(body, `class="later"`) != tc.next {
				t.Errorf("from %q: prev/later links %v/%v, want %v/%v", tc.from, strings.Contains(body, `class="prev"`), strings.Contains(body, `class="later"`), tc.prev, tc.next)
			}
		}
		pyd := get(t, c, base+"?view=pydantic&from=500", http.StatusOK)
		if n := strings.Count(pyd, `class="pm `); n == 0 || n > 500 {
			t.Errorf("pydantic view draws %d messages", n)
		}
	})

	t.Run("unbound key acts for the named user", func(t *testing.T) {
		c, _ := f.client(t, openKey, "bob")
		list := get(t, c, f.srv.URL+"/ui/sessions", http.StatusOK)
		if !strings.Contains(list, f.bob.String()) || strings.Contains(list, f.alice.String()) {
			t.Errorf("open key as bob sees the wrong sessions")
		}
	})

	t.Run("the finish users expect", func(t *testing.T) {
		plain := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		// / leads to the viewer; the icon needs no sign-in; no folder listing.
		resp, err := plain.Get(f.srv.URL + "/")
		if err != nil || resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
			t.Errorf("GET /: %v %v", resp.StatusCode, err)
		}
		if ico := get(t, plain, f.srv.URL+"/favicon.ico", http.StatusOK); !strings.HasPrefix(ico, "<svg") {
			t.Errorf("favicon: %.40q", ico)
		}
		get(t, plain, f.srv.URL+"/ui/static/", http.StatusNotFound)
		get(t, plain, f.srv.URL+"/ui/static/app.js", http.StatusOK)

		c, _ := f.client(t, aliceKey, "")
		// The status filter offers the four statuses, and error works.
		list := get(t, c, f.srv.URL+"/ui/sessions", http.StatusOK)
		if !strings.Contains(list, `<option value="error"`) || strings.Contains(list, "expired") {
			t.Errorf("status filter options wrong")
		}
		get(t, c, f.srv.URL+"/ui/sessions?status=error", http.StatusOK)
		// Pages forward and back: one session a page.
		p1 := get(t, c, f.srv.URL+"/ui/sessions?limit=1", http.StatusOK)
		next := regexp.MustCompile(`href="([^"]+)" id="next"`).FindStringSubmatch(p1)
		if next == nil || strings.Contains(p1, `id="prev"`) {
			t.Fatalf("first page: next %v", next)
		}
		p2 := get(t, c, f.srv.URL+html.UnescapeString(next[1]), http.StatusOK)
		prev := regexp.MustCompile(`href="([^"]+)" id="prev"`).FindStringSubmatch(p2)
		if prev == nil {
			t.Fatal("second page has no previous link")
		}
		if back := get(t, c, f.srv.URL+html.UnescapeString(prev[1]), http.StatusOK); rowsOf(back) != rowsOf(p1) {
			t.Errorf("previous page differs from the first")
		}
		// Numbered deep links; a tool return pretty-printed; < in arguments.
		page := get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String(), http.StatusOK)
		for _, want := range []string{`<a class="num" href="#m3"`, "{\n  &#34;flights&#34;: 3\n}", `&lt;/pre&gt;&lt;script&gt;`, `1,048,576 characters`, `datetime="`} {
			if !strings.Contains(page, want) {
				t.Errorf("session page lacks %q", want)
			}
		}
		if strings.Contains(page, `\u003c`) {
			t.Error(`session page shows \u003c for <`)
		}
		// The session as JSON: every stored row in full.
		js := get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String()+"/json", http.StatusOK)
		var rows []map[string]any
		if err := json.Unmarshal([]byte(js), &rows); err != nil || len(rows) != 6 || rows[2]["content"] != f.long {
			t.Errorf("session JSON: %d rows, %v", len(rows), err)
		}
		// A call that does not exist.
		get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String()+"/audit/7", http.StatusNotFound)
		get(t, c, f.srv.URL+"/ui/sessions/"+f.bob.String()+"/audit/0", http.StatusNotFound)
	})

	t.Run("search", func(t *testing.T) {
		// What serve's indexer would have done by now: the long session of
		// an earlier subtest is more than a search's own catch-up indexes
		// under a loaded CI machine.
		if _, err := sessionstore.IndexSearch(context.Background(), f.db, 0); err != nil {
			t.Fatal(err)
		}
		c, _ := f.client(t, aliceKey, "")
		page := search(t, c, f.srv.URL+"/ui/search?q=three", http.StatusOK)
		hit := regexp.MustCompile(`href="(/ui/sessions/[^"]+)" class="hit"`).FindStringSubmatch(page)
		if hit == nil || !strings.Contains(page, "1 result") {
			t.Fatalf("search three: %.3000s", page[max(strings.Index(page, "<main"), 0):])
		}
		// The result's link leads to the message: ?ts= redirects to its page.
		plain := &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := plain.Get(f.srv.URL + html.UnescapeString(hit[1]))
		if err != nil || resp.StatusCode != http.StatusSeeOther || !strings.HasSuffix(resp.Header.Get("Location"), "?all=1&from=2#m2") {
			t.Errorf("result link: %v %v", resp.Header.Get("Location"), err)
		}
		// Bob's words are not hers to find; bad input is a 400 naming it.
		if page := search(t, c, f.srv.URL+"/ui/search?q=private", http.StatusOK); !strings.Contains(page, "0 results") {
			t.Error("alice's search found bob's answer")
		}
		if page := search(t, c, f.srv.URL+"/ui/search?q=%21%21", http.StatusBadRequest); !strings.Contains(page, "no word") {
			t.Error("a query without words is not refused")
		}
		// A page that is not a number is a 400 naming it, as the API's
		// (it was read as the first page).
		for _, off := range []string{"abc", "1e3", "-1"} {
			if page := search(t, c, f.srv.URL+"/ui/search?q=three&offset="+off, http.StatusBadRequest); !strings.Contains(page, "offset") {
				t.Errorf("offset=%s: the page does not name the offset: %.300s", off, page)
			}
		}
		if page := search(t, c, f.srv.URL+"/ui/search?q=search&in=tool", http.StatusOK); !strings.Contains(page, "1 result") {
			t.Error("tool search")
		}
		if page := search(t, c, f.srv.URL+"/ui/search?q="+url.QueryEscape(f.key)+"&in=key", http.StatusOK); !strings.Contains(page, "#m2") {
			t.Error("key search does not link to the message")
		}
	})

	// A query parameter given twice is a 400 naming it on every page, as
	// on the API: the page would draw one of the two, a guess.
	t.Run("a repeated query parameter", func(t *testing.T) {
		c, _ := f.client(t, aliceKey, "")
		s := "/ui/sessions/" + f.alice.String()
		for _, tc := range []struct{ path, name string }{
			{s + "?view=pydantic&view=history", "view"},
			{s + "?from=0&from=2", "from"},
			{s + "?all=1&failed=1&all=0", "all"},
			{s + "/audit?a=0&b=1&b=0", "b"},
			{"/ui/sessions?status=active&status=error", "status"},
			{"/ui/search?q=three&q=plan", "q"},
			{"/ui/login?next=/ui/sessions&next=/ui/search", "next"},
		} {
			if page := get(t, c, f.srv.URL+tc.path, http.StatusBadRequest); !strings.Contains(page, html.EscapeString(`field "`+tc.name+`"`)) {
				t.Errorf("%s: %.300s", tc.path, page[max(strings.Index(page, "<main"), 0):])
			}
		}
		resp, err := c.Get(f.srv.URL + "/ui/lookup?key=" + url.QueryEscape(f.key) + "&key=x")
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]string
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body["error"], `"key"`) {
			t.Errorf("lookup with key twice: %d %v", resp.StatusCode, body)
		}
		get(t, c, f.srv.URL+s+"?view=pydantic&from=0", http.StatusOK) // each once: as before
	})

	t.Run("hostile strings are text", func(t *testing.T) {
		c, _ := f.client(t, aliceKey, "")
		for _, page := range []string{"", "?view=pydantic", "/audit?a=0&b=1"} {
			body := get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String()+page, http.StatusOK)
			for _, raw := range []string{"<script>window", "<img src=x", "<b onmouseover", "</pre><script>", "\u202e"} {
				if strings.Contains(body, raw) {
					t.Errorf("page %q carries %q unescaped", page, raw)
				}
			}
			if page != "/audit?a=0&b=1" && !strings.Contains(body, "U+202E") { // the audit diff shows only what changed
				t.Errorf("page %q does not show the RTL override as a code point", page)
			}
			if strings.Count(body, "<script") != 1 { // the layout's own app.js
				t.Errorf("page %q has %d script tags", page, strings.Count(body, "<script"))
			}
		}
		body := get(t, c, f.srv.URL+"/ui/sessions/"+f.alice.String(), http.StatusOK)
		for _, esc := range []string{"&lt;script&gt;window.__xss=1&lt;/script&gt;", "&lt;b onmouseover="} {
			if !strings.Contains(body, esc) {
				t.Errorf("escaped %q not on the page", esc)
			}
		}
	})
}

// The viewer is off unless asked for: without Options.UI, /ui/ is the API's
// (a bearer key wanted, then no such route).
func TestViewerOffByDefault(t *testing.T) {
	t.Parallel()
	api, err := httpapi.New(httpapi.Options{Stores: storesOf(t, dbtest.NewSQLite(t), 0), APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	if resp, _ := http.Get(srv.URL + "/ui/login"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("/ui/login without --ui and without a key: %d, want 401", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/ui/login", nil)
	req.Header.Set("Authorization", "Bearer "+aliceKey)
	if resp, _ := http.DefaultClient.Do(req); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/ui/login without --ui: %d, want 404", resp.StatusCode)
	}
}

// With storage switched off the viewer shows nothing that is stored: its
// pages answer 503 with the reason (they used to read the data regardless).
func TestViewerRefusesWhenStorageOff(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	off, err := sessionstore.NewStores(f.db, sessionstore.Options{TruncateLength: viewerT, Disabled: true})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Stores: off, UI: true, APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	tok := csrfField.FindStringSubmatch(get(t, c, srv.URL+"/ui/login", http.StatusOK))[1]
	resp, err := c.PostForm(srv.URL+"/ui/login", url.Values{"csrf": {tok}, "key": {aliceKey}, "user": {"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, p := range []string{"/ui/sessions", "/ui/sessions/trip"} {
		body := get(t, c, srv.URL+p, http.StatusServiceUnavailable)
		if !strings.Contains(body, "storage is off") || strings.Contains(body, "trip") && strings.Contains(body, "Hi") {
			t.Errorf("%s: %.300s", p, body)
		}
	}
}

// rowsOf is the session links of a list page.
func rowsOf(page string) string {
	return strings.Join(regexp.MustCompile(`href="/ui/sessions/[0-9a-f-]{36}"`).FindAllString(page, -1), " ")
}

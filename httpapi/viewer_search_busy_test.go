package httpapi

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
)

// The viewer's search page refused by the search budget says when to come
// back in the Retry-After header, as the API's 429 does, and the same
// number of seconds.
func TestViewerSearchRefusalSaysWhen(t *testing.T) {
	t.Parallel()
	s := newAPI(t, dbtest.NewSQLite(t), Options{UI: true})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	csrf := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)
	read := func(resp *http.Response, err error) (*http.Response, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	_, page := read(c.Get(srv.URL + "/ui/login"))
	m := csrf.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSRF token in the sign-in form")
	}
	read(c.PostForm(srv.URL+"/ui/login", url.Values{"csrf": {m[1]}, "key": {"alice-only-0123456789"}, "user": {"alice"}}))

	// alice (her key is bound to her) has spent her credit: a minute of searching just now.
	now := time.Now()
	s.searches.done("user alice", now, 0)
	s.searches.take("user alice", now)
	s.searches.done("user alice", now, time.Minute)

	resp, _ := read(c.Get(srv.URL + "/ui/search?q=lisbon"))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("viewer search: %d, want 429", resp.StatusCode)
	}
	ui, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || ui < 1 {
		t.Fatalf("viewer's Retry-After %q, want whole seconds >= 1", resp.Header.Get("Retry-After"))
	}
	r := httptest.NewRequest("GET", "/v1/search?q=lisbon", nil)
	r.Header.Set("Authorization", "Bearer alice-only-0123456789")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	api, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if w.Code != http.StatusTooManyRequests || err != nil {
		t.Fatalf("API search: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if d := ui - api; d < -1 || d > 1 {
		t.Errorf("viewer says %d s, the API %d s", ui, api)
	}
}

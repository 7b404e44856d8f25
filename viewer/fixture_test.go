package viewer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// Hostile strings the pages must draw as text.
const (
	xssContent = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	xssName    = `<b onmouseover="window.__xss=3">trip</b>`
	xssArgs    = `{"q":"</pre><script>window.__xss=4</script>"}`
	rtl        = "invoice\u202Egnp.exe"
)

const (
	aliceKey = "alice-key-0123456789abcdef"
	bobKey   = "bob-key-0123456789abcdef00"
	openKey  = "open-key-0123456789abcdef0" // not bound to a user
	viewerT  = 10
)

type fixture struct {
	srv       *httptest.Server
	db        *repository.DB
	alice     uuid.UUID // alice's session ("trip" key, hostile name)
	bob       uuid.UUID // bob's session
	long      string    // the cut answer, in full
	key       string    // its REM LOOKUP key
	megaLine  string
	notes     uuid.UUID // alice's second session, compacted
	auditDir  string
	bobAnswer string
}

// newFixture serves the API with the viewer over a real database: alice's
// session with a cut answer, a tool pair, hostile strings and a 1 MB line,
// two audit dumps of her agent calls, and bob's session under the same key.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := dbtest.NewPostgres(t)
	f := &fixture{auditDir: t.TempDir(), db: db}
	store := func(user string) *sessionstore.Store {
		s, err := sessionstore.New(db, sessionstore.Options{UserID: user, TruncateLength: viewerT})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	alice, bob := store("alice"), store("bob")
	// The cut answer ends with a bidi override: Expand must keep it visible.
	f.long = "The plan, in full: " + strings.Repeat("day one, day two, day three; ", 6) + "the end. " + rtl
	f.megaLine = strings.Repeat("m", 1<<20)
	first := []models.HistoryMessage{
		{Role: "user", Content: "plan the trip " + rtl},
		{Role: "assistant", Content: "short", Extra: []models.Field{{Key: "author", Value: []byte(`"planner"`)},
			{Key: "usage", Value: []byte(`{"input_tokens":1200,"output_tokens":30}`)}}},
	}
	r, err := alice.Store(ctx, "trip", first, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.alice = r.SessionID
	// The first agent call saw these two, whole (a generous T).
	h1, err := alice.Load(ctx, "trip", sessionstore.LoadOptions{NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	audit.RecordIn(ctx, f.auditDir, f.alice.String(), "planner", "first prompt", h1, 3)
	more := []models.HistoryMessage{
		{Role: "assistant", Content: f.long},
		{Role: "tool", Content: `{"flights": 3}`, ToolCallID: "call_1", ToolName: "search", ToolArguments: []byte(xssArgs)},
		{Role: "user", Content: xssContent},
		{Role: "assistant", Content: f.megaLine},
	}
	r, err = alice.Store(ctx, "trip", more, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.key = r.Keys[0]
	if _, err := alice.UpdateSession(ctx, "trip", sessionstore.SessionUpdate{Name: models.Ptr(xssName)}); err != nil {
		t.Fatal(err)
	}
	// The second call saw all six, the long answers cut.
	h2, err := alice.Load(ctx, "trip", sessionstore.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Recorded whole (issue 41): the system prompt remstore sent first, and
	// what the model answered, completed by its caller.
	lat := 1234.0
	if err := audit.Append(ctx, f.auditDir, f.alice.String(), audit.Invocation{Timestamp: time.Now(), AgentName: "planner", Prompt: "second prompt",
		RawSessionHistory: h2, PydanticMessagesCount: 7, SystemPrompt: "You plan trips.",
		Exchange: audit.Exchange{CallID: "second", Model: "gpt-trip", LatencyMS: &lat,
			Answer: json.RawMessage(`[{"kind":"response","parts":[{"part_kind":"text","content":"Book the 9:40 train."}]}]`)}}); err != nil {
		t.Fatal(err)
	}
	// A second session of hers, compacted: a summary replaces all but the
	// last 2 of its 6 messages.
	var six []models.HistoryMessage
	for i := range 3 {
		six = append(six, models.HistoryMessage{Role: "user", Content: fmt.Sprintf("note %d", i)},
			models.HistoryMessage{Role: "assistant", Content: fmt.Sprintf("noted %d", i)})
	}
	r, err = alice.Store(ctx, "notes", six, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.notes = r.SessionID
	if _, err := alice.Compact(ctx, "notes", func(context.Context, []models.HistoryMessage) (string, error) {
		return "the user took notes 0 to 1", nil
	}, sessionstore.CompactOptions{KeepLast: 2}); err != nil {
		t.Fatal(err)
	}
	// Bob's "trip" is another session, with a dump of its own (named by
	// its UUID), which alice must not see.
	f.bobAnswer = "bob's private answer"
	r, err = bob.Store(ctx, "trip", []models.HistoryMessage{{Role: "user", Content: "bob asks"}, {Role: "assistant", Content: f.bobAnswer}}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.bob = r.SessionID
	hb, _ := bob.Load(ctx, "trip", sessionstore.LoadOptions{})
	audit.RecordIn(ctx, f.auditDir, f.bob.String(), "bob-agent", "bob's prompt", hb, 2)

	api, err := httpapi.New(httpapi.Options{Stores: storesOf(t, db, viewerT), UI: true, AuditDir: f.auditDir,
		APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}, {Key: bobKey, UserID: "bob"}, {Key: openKey}}})
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(api)
	t.Cleanup(f.srv.Close)
	return f
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// client signs in over plain HTTP as a browser would and returns the client
// (with its cookie jar) and the page's CSRF token.
func (f *fixture) client(t *testing.T, key, user string) (*http.Client, string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	body := get(t, c, f.srv.URL+"/ui/login", http.StatusOK)
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the sign-in form")
	}
	resp, err := c.PostForm(f.srv.URL+"/ui/login", url.Values{"csrf": {m[1]}, "key": {key}, "user": {user}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	page := get(t, c, f.srv.URL+"/ui/sessions", http.StatusOK)
	m = csrfField.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("not signed in as %q: %.300s", user, page)
	}
	return c, m[1]
}

func get(t *testing.T, c *http.Client, u string, want int) string {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d: %.300s", u, resp.StatusCode, want, b)
	}
	return string(b)
}

// search is get for a search page, as a browser's user would do it: a
// search that took over 50 ms makes the next one of the same user wait
// (429 with Retry-After, the search budget), which on a loaded machine
// (-race) even this fixture's searches can take; the wait is honoured, three
// times at most.
func search(t *testing.T, c *http.Client, u string, want int) string {
	t.Helper()
	for try := 0; ; try++ {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusTooManyRequests && try < 3 {
			wait, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			time.Sleep(time.Duration(max(wait, 1)) * time.Second)
			continue
		}
		if resp.StatusCode != want {
			t.Fatalf("GET %s: %d, want %d: %.300s", u, resp.StatusCode, want, b)
		}
		return string(b)
	}
}

// storesOf builds the stores of db as serve does (tests: T given, storage on).
func storesOf(t testing.TB, db *repository.DB, truncate int) *sessionstore.Stores {
	t.Helper()
	s, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: truncate})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

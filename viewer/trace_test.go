package viewer_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/viewer"
)

// Issue 41: a message's trace is shown, and linked through the configured
// template with its ids escaped; a template that is not an http(s) URL
// naming {trace_id} is refused when the viewer is made.
func TestTraceLinks(t *testing.T) {
	for _, tc := range []struct{ tmpl, err string }{
		{"", ""},
		{"http://localhost:16686/trace/{trace_id}", ""},
		{"https://tracing.example/t/{trace_id}?span={span_id}", ""},
		{"https://tracing.example/t/", "{trace_id}"},
		{"javascript:alert({trace_id})", "http"},
		{"/relative/{trace_id}", "http"},
	} {
		if err := viewer.CheckTraceURL(tc.tmpl); (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("CheckTraceURL(%q) = %v, want an error naming %q", tc.tmpl, err, tc.err)
		}
	}
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	traced := models.HistoryMessage{Role: "user", Content: "traced", Extra: []models.Field{
		{Key: "trace_id", Value: []byte(`"ab/cd?x=<y>"`)}, {Key: "span_id", Value: []byte(`"s1"`)}}}
	r, err := s.Store(context.Background(), "chat", []models.HistoryMessage{traced, {Role: "user", Content: "untraced"}}, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ tmpl, want string }{
		{"https://tracing.example/t/{trace_id}?span={span_id}", `href="https://tracing.example/t/ab%2Fcd%3Fx=%3Cy%3E?span=s1"`},
		{"", `<span class="trace" title="trace ab/cd?x=&lt;y&gt;, span s1">trace</span>`},
	} {
		v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil }, SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil },
			KeyOptional: true, TraceURL: tc.tmpl})
		if err != nil {
			t.Fatal(err)
		}
		page := signedInGet(t, v, "/ui/sessions/"+r.SessionID.String())
		if !strings.Contains(page, tc.want) {
			i := strings.Index(page, "traced")
			t.Fatalf("template %q: the page lacks %s: %.800s", tc.tmpl, tc.want, page[max(i-600, 0):])
		}
		if strings.Count(page, `class="trace"`) != 1 {
			t.Fatalf("template %q: %d trace marks, want 1 (the untraced message has none)", tc.tmpl, strings.Count(page, `class="trace"`))
		}
	}
}

// signedInGet signs in (no key needed) and returns the page at path.
func signedInGet(t *testing.T, v *viewer.Viewer, path string) string {
	t.Helper()
	srv := httptest.NewServer(v)
	defer srv.Close()
	c, _ := (&fixture{srv: srv}).client(t, "", "alice")
	return get(t, c, srv.URL+path, http.StatusOK)
}

// Issue 41: failed steps are marked in the session, counted, and a filter
// draws them alone, at their positions in the history.
func TestFailedStepsMarkedAndFiltered(t *testing.T) {
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []models.HistoryMessage{
		{Role: "user", Content: "weather in Atlantis?"},
		{Role: "assistant", Content: "", ToolCalls: []models.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Atlantis"}`}}},
		{Role: "tool", Content: `{"status": "error", "message": "no such city"}`, ToolCallID: "c1", ToolName: "weather"},
		{Role: "assistant", Content: "", ToolCalls: []models.ToolCall{{ID: "c2", Name: "weather", Arguments: `{"city":"Lisbon"}`}}},
		{Role: "tool", Content: `{"status": "success", "celsius": 21}`, ToolCallID: "c2", ToolName: "weather"},
		{Role: "assistant", Content: "Atlantis is not a city; Lisbon is 21 degrees."},
	}
	r, err := s.Store(context.Background(), "steps", msgs, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	page := signedInGet(t, v, "/ui/sessions/"+r.SessionID.String())
	if !strings.Contains(page, `class="msg r-tool failed" id="m2"`) || strings.Count(page, ` failed"`) != 1 ||
		!strings.Contains(page, `<b class="failure">tool error</b>`) || !strings.Contains(page, "1 failed step") {
		t.Fatalf("the failed tool return is not marked once: %.3000s", page[max(strings.Index(page, "<main"), 0):])
	}
	// The call page marks it too: an audited call that saw the session.
	dir := t.TempDir()
	h, err := s.Load(context.Background(), "steps", sessionstore.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	audit.RecordIn(context.Background(), dir, dumpID(t, s, "steps"), "agent", "next", h, len(h))
	va, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true, AuditDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	call := signedInGet(t, va, "/ui/sessions/steps/audit/0")
	if !strings.Contains(call, `class="msg r-tool failed" id="c2"`) || strings.Count(call, `<b class="failure">`) != 1 {
		t.Fatalf("the call page does not mark the failed tool return once: %.3000s", call[max(strings.Index(call, "<main"), 0):])
	}
	only := signedInGet(t, v, "/ui/sessions/"+r.SessionID.String()+"?failed=1")
	if n := strings.Count(only, `<li class="msg `); n != 1 || !strings.Contains(only, `id="m2"`) || !strings.Contains(only, "The failed steps only") {
		t.Fatalf("the filter drew %d messages: %.3000s", n, only[max(strings.Index(only, "<main"), 0):])
	}
}

// Issue 41: the call page shows the system prompt remstore sent first, when
// the dump recorded it (a pydantic-ai load with a system prompt).
func TestCallPageShowsTheSystemPrompt(t *testing.T) {
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store(context.Background(), "chat", []models.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	load := func() ([]models.HistoryMessage, error) {
		return s.Load(context.Background(), "chat", sessionstore.LoadOptions{})
	}
	if err := audit.WritePydanticAI(context.Background(), io.Discard, convert.Options{SystemPrompt: "You are <b>terse</b>."},
		&audit.Call{Dir: dir, SessionID: dumpID(t, s, "chat"), AgentName: "a", Prompt: "next"}, nil, load, nil); err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true, AuditDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	call := signedInGet(t, v, "/ui/sessions/chat/audit/0")
	if !strings.Contains(call, `id="systemprompt"><pre class="body prompt">You are &lt;b&gt;terse&lt;/b&gt;.</pre>`) || strings.Contains(call, "not in the audit dump") {
		t.Fatalf("the call page does not show the system prompt sent: %.2000s", call[max(strings.Index(call, "callinfo"), 0):])
	}
}

// Issue 41: the search page pages (a search stopped at 50, saying "50
// results") and narrows by role.
func TestSearchPagePages(t *testing.T) {
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []models.HistoryMessage
	for i := range 60 {
		role := models.RoleUser
		if i%3 == 0 {
			role = models.RoleAssistant
		}
		msgs = append(msgs, models.HistoryMessage{Role: role, Content: "paris note"})
	}
	if _, err := s.Store(context.Background(), "many", msgs, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	first := signedInGet(t, v, "/ui/search?q=paris")
	if !strings.Contains(first, "results 1–50, more follow") || !strings.Contains(first, `id="olderhits"`) || strings.Count(first, `class="hit"`) != 50 {
		t.Fatalf("first page: %.1500s", first[max(strings.Index(first, "hitcount"), 0):])
	}
	second := signedInGet(t, v, "/ui/search?q=paris&in=content&offset=50")
	if !strings.Contains(second, "results 51–60") || strings.Contains(second, "more follow") || !strings.Contains(second, `id="newerhits"`) || strings.Count(second, `class="hit"`) != 10 {
		t.Fatalf("second page: %.1500s", second[max(strings.Index(second, "hitcount"), 0):])
	}
	answers := signedInGet(t, v, "/ui/search?q=paris&role=assistant")
	if !strings.Contains(answers, "20 results") || strings.Count(answers, `class="hit"`) != 20 {
		t.Fatalf("by role: %.800s", answers[max(strings.Index(answers, "hitcount"), 0):])
	}
	// By tool: none of these notes is a tool's; the box keeps what it was given.
	tool := signedInGet(t, v, "/ui/search?q=paris&tool=weather")
	if !strings.Contains(tool, "0 results") || !strings.Contains(tool, `name="tool" value="weather" placeholder="tool"`) {
		t.Fatalf("by tool: %.1500s", tool[max(strings.Index(tool, "searchform"), 0):])
	}
}

// Issue 41: a call completed by its caller shows what the model answered,
// its latency, its own tokens, its model and the tools it was offered; the
// audit page places the calls on a waterfall, with a duration derived from
// the stored answer where no latency was recorded.
func TestCallPageShowsTheExchange(t *testing.T) {
	db := dbtest.NewSQLite(t)
	clock := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice", Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Store(ctx, "ex", []models.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	h, _ := s.Load(ctx, "ex", sessionstore.LoadOptions{})
	lat := 812.5
	if err := audit.Append(ctx, dir, dumpID(t, s, "ex"), audit.Invocation{Timestamp: clock.Add(time.Second), AgentName: "a", Prompt: "weather?", RawSessionHistory: h,
		Exchange: audit.Exchange{CallID: "c1", Model: "gpt-x", LatencyMS: &lat, Usage: json.RawMessage(`{"input_tokens":31,"output_tokens":4}`),
			Tools:  json.RawMessage(`[{"type":"function","function":{"name":"get_weather"}},{"name":"rem_lookup"}]`),
			Answer: json.RawMessage(`{"choices":[{"message":{"content":"Cold <i>today</i>."}}]}`)}}); err != nil {
		t.Fatal(err)
	}
	// A second call with no latency: its answer is stored 2.5 s after it.
	if err := audit.Append(ctx, dir, dumpID(t, s, "ex"), audit.Invocation{Timestamp: clock.Add(3 * time.Second), AgentName: "a", Prompt: "and now?", RawSessionHistory: h}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(5500 * time.Millisecond)
	if _, err := s.Store(ctx, "ex", []models.HistoryMessage{{Role: "user", Content: "and now?"}, {Role: "assistant", Content: "warm"}}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true, AuditDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	call := signedInGet(t, v, "/ui/sessions/ex/audit/0")
	for _, want := range []string{`id="callmodel"><bdi>gpt-x</bdi>`, `id="calllatency">812 ms`, `id="calltokens">31 in, 4 out`,
		`<code><bdi>get_weather</bdi></code>, <code><bdi>rem_lookup</bdi></code>`, `Cold &lt;i&gt;today&lt;/i&gt;.`} {
		if !strings.Contains(call, want) {
			t.Errorf("call page lacks %s: %.3000s", want, call[max(strings.Index(call, "callinfo"), 0):])
		}
	}
	page := signedInGet(t, v, "/ui/sessions/ex/audit")
	// Call 0 starts the span and takes 812.5 ms; call 1 starts at 2,000 ms
	// and lasts to its answer at 4,500 ms: the span is 4,500 ms.
	for _, want := range []string{`812 ms</td>`, `2.5 s*</td>`, `<rect x="0" y="0" width="180" height="10"/>`, `<rect x="444" y="0" width="555" height="10"/>`} {
		if !strings.Contains(page, want) {
			t.Errorf("audit page lacks %s: %.4000s", want, page[max(strings.Index(page, "timeline"), 0):])
		}
	}
}

// Issue 41: the sessions list counts each session's failed steps, links
// them to the session's failed-steps view, and filters the page to the
// sessions that have one.
func TestSessionListMarksFailures(t *testing.T) {
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bad, err := s.Store(ctx, "bad", []models.HistoryMessage{{Role: "user", Content: "go"},
		{Role: "assistant", Content: "", ToolCalls: []models.ToolCall{{ID: "c1", Name: "w", Arguments: "{}"}, {ID: "c2", Name: "w", Arguments: "{}"}}},
		{Role: "tool", Content: `{"status": "error"}`, ToolCallID: "c1", ToolName: "w"},
		{Role: "tool", Content: `{"is_error": true}`, ToolCallID: "c2", ToolName: "w"}}, sessionstore.StoreOptions{})

	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store(ctx, "good", []models.HistoryMessage{{Role: "user", Content: "hi"}, {Role: "assistant", Content: "hello"}}, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	link := `<a href="/ui/sessions/` + bad.SessionID.String() + `?failed=1" class="failedsteps" title="the failed steps of this session">2</a>`
	list := signedInGet(t, v, "/ui/sessions")
	if !strings.Contains(list, link) || strings.Count(list, `class="failedsteps"`) != 1 || !strings.Contains(list, ">good</bdi>") {
		t.Fatalf("the list does not mark the one failing session: %.3000s", list[max(strings.Index(list, "<table"), 0):])
	}
	only := signedInGet(t, v, "/ui/sessions?failed=1")
	if !strings.Contains(only, link) || strings.Contains(only, ">good</bdi>") {
		t.Fatalf("the filter keeps other sessions: %.3000s", only[max(strings.Index(only, "<table"), 0):])
	}
}

// dumpID is the id a session's audit dump is named by: its UUID.
func dumpID(t *testing.T, s *sessionstore.Store, name string) string {
	t.Helper()
	id, err := s.ResolveID(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return id.String()
}

package viewer_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
)

// EnvChromium names the browser binary; EnvRequireBrowser=1 (CI) makes a
// missing one a failure instead of a skip. scripts/test.sh installs Debian's
// chromium when it is missing.
const (
	EnvChromium       = "REMSTORE_CHROMIUM"
	EnvRequireBrowser = "REMSTORE_REQUIRE_BROWSER"
)

func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv(EnvChromium), "/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv(EnvRequireBrowser) == "1" {
		t.Fatalf("no Chromium (set %s) and %s=1: the browser tests must run (make test installs Debian's chromium)", EnvChromium, EnvRequireBrowser)
	}
	t.Skipf("no Chromium: set %s or run make test", EnvChromium)
	return ""
}

// profileDir is a fresh Chromium profile. Chromium may still be writing to it
// for a moment after it is told to exit, so it is removed with retries and
// without failing the test (t.TempDir would fail on "directory not empty").
func profileDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "remstore-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}

// newBrowser starts a headless Chromium with a fresh profile (and extra
// flags) for one test; it ends with the test or after timeout.
func newBrowser(t *testing.T, bin string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profileDir(t)), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// The viewer in a real browser: sign in, open a session, expand a cut message
// and compare it with the stored text, switch to the pydantic-ai view, diff
// two audit dumps, meet an XSS payload and another user's session. A
// screenshot of each page goes to .test-output/ui/.
func TestViewerInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	f := newFixture(t)
	shots := filepath.Join("..", ".test-output", "ui")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, bin, 90*time.Second)

	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}
	shot := func(name string) {
		t.Helper()
		var png []byte
		run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var text string
	var xss any

	// Sign in: the session list asks for it first.
	run("sign in",
		chromedp.Navigate(f.srv.URL+"/ui/sessions"),
		chromedp.WaitVisible("#key", chromedp.ByID),
		chromedp.SendKeys("#key", aliceKey, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
		chromedp.WaitVisible("#sessions", chromedp.ByID),
		chromedp.Text("#sessions", &text, chromedp.ByID),
	)
	if !strings.Contains(text, xssName) || strings.Contains(text, "bob") {
		t.Errorf("session list: %q", text)
	}
	shot("sessions")

	// A session as the agent sees it; the hostile strings are text.
	run("open the session",
		chromedp.Click(`a[href="/ui/sessions/`+f.alice.String()+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#messages", chromedp.ByID),
		chromedp.Text("#messages", &text, chromedp.ByID),
		chromedp.Evaluate(`window.__xss === undefined ? null : window.__xss`, &xss),
	)
	if xss != nil {
		t.Errorf("a payload ran: window.__xss = %v", xss)
	}
	for _, want := range []string{xssContent, "U+202E", "REM LOOKUP " + f.key, `"</pre><script>window.__xss=4</script>"`} {
		if !strings.Contains(text, want) {
			t.Errorf("session page text lacks %q", want)
		}
	}
	shot("session")

	// Expand the cut answer in place: the text shown is the stored text,
	// its bidi override drawn as the visible code point the page shows
	// (before, Expand inserted the raw control and the name read reversed).
	cut := fmt.Sprintf(`button.expand[data-key=%q]`, f.key)
	var ctl int
	run("expand the cut message",
		chromedp.Click(cut, chromedp.ByQuery),
		chromedp.WaitVisible(`#m2 pre.full`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#m2 pre.full").textContent`, &text),
		chromedp.Evaluate(`document.querySelectorAll("#m2 pre.full span.ctl").length`, &ctl),
	)
	if want := strings.Replace(f.long, "\u202e", "U+202E", 1); text != want || ctl != 1 || strings.ContainsRune(text, '\u202e') {
		t.Errorf("expanded text is not the stored text with its control visible:\n got %q (%d controls)\nwant %q", text, ctl, want)
	}
	shot("session-expanded")

	// The pydantic-ai messages remstore would send.
	run("switch to pydantic-ai",
		chromedp.Click("#tab-pydantic", chromedp.ByID),
		chromedp.WaitVisible("#pydantic", chromedp.ByID),
		// textContent: the labels are drawn upper-case by the style sheet.
		chromedp.Evaluate(`document.querySelector("#pydantic").textContent`, &text),
	)
	for _, want := range []string{"tool-call", "tool-return", "user-prompt", "search"} {
		if !strings.Contains(text, want) {
			t.Errorf("pydantic-ai view lacks %q", want)
		}
	}
	shot("pydantic")

	// Two audit dumps and what changed between them.
	run("compare two agent calls",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.alice.String()+"/audit"),
		chromedp.WaitVisible("#timeline", chromedp.ByID),
		chromedp.Click("#a0", chromedp.ByID),
		chromedp.Click("#b1", chromedp.ByID),
		chromedp.Click("#compare", chromedp.ByID),
		chromedp.WaitVisible("#diff", chromedp.ByID),
		chromedp.Text("#diffsummary", &text, chromedp.ByID),
	)
	// Hand-counted: call 0 saw 2 messages whole, call 1 saw those 2 and 4
	// more (2 of them cut, T = 10).
	if text != "4 added, 0 cut, 0 dropped, 2 unchanged" {
		t.Errorf("diff summary %q", text)
	}
	shot("audit-diff")

	// Another user's session id is not found.
	run("another user's session",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.bob.String()),
		chromedp.WaitVisible("#error", chromedp.ByID),
		chromedp.Text("h1", &text, chromedp.ByQuery),
	)
	if text != "404" {
		t.Errorf("bob's session for alice: %q, want 404", text)
	}
	shot("not-found")

	// What was spent: usage, model and author per message, summed per session.
	var meta string
	run("usage",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.alice.String()),
		chromedp.WaitVisible("#usage", chromedp.ByID),
		chromedp.Text("#usage", &text, chromedp.ByID),
		chromedp.Text("#m1 .meta", &meta, chromedp.ByQuery),
	)
	if !strings.Contains(text, "1,200 tokens in, 30 out over 1 message") {
		t.Errorf("session usage: %q", text)
	}
	if !strings.Contains(meta, "planner") || !strings.Contains(meta, "1,200 in / 30 out tokens") {
		t.Errorf("message usage: %q", meta)
	}

	// One agent call in full: every message it got (the cut one expandable,
	// its bidi override visible), linked to its stored row, and the JSON.
	var n, rows int
	run("open one call",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.alice.String()+"/audit"),
		chromedp.WaitVisible("#timeline", chromedp.ByID),
		chromedp.Click(`a.call-link[href$="/audit/1"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#callmessages", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#callmessages > li.msg").length`, &n),
		chromedp.Evaluate(`document.querySelectorAll("#callmessages a.row").length`, &rows),
		chromedp.Text("#calljson", &text, chromedp.ByID),
		chromedp.Text("#callusage", &meta, chromedp.ByID),
	)
	// What the model received first and what it answered (issue 41).
	var system, answer, model string
	run("the call's system prompt and answer",
		chromedp.Text("#systemprompt", &system, chromedp.ByID),
		chromedp.Text("#callanswer", &answer, chromedp.ByID),
		chromedp.Text("#callmodel", &model, chromedp.ByID),
	)
	if !strings.Contains(system, "You plan trips.") || !strings.Contains(answer, "Book the 9:40 train.") || model != "gpt-trip" {
		t.Errorf("call page: system prompt %q, answer %.200q, model %q", system, answer, model)
	}
	if !strings.Contains(meta, "1,200 tokens in, 30 out, stored with 1 message") {
		t.Errorf("call usage: %q", meta)
	}
	// Hand-counted: call 1 saw the 6 messages stored before it.
	if n != 6 || rows != 6 || !strings.Contains(text, `"part_kind": "tool-call"`) || !strings.Contains(text, `"tool_name": "search"`) {
		t.Errorf("call page: %d messages, %d row links, JSON %.200q", n, rows, text)
	}
	run("expand in the call",
		chromedp.Click(fmt.Sprintf(`#callmessages button.expand[data-key=%q]`, f.key), chromedp.ByQuery),
		chromedp.WaitVisible(`#callmessages pre.full`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#callmessages pre.full").textContent`, &text),
	)
	if want := strings.Replace(f.long, "\u202e", "U+202E", 1); text != want {
		t.Errorf("expanded in the call: %q", text)
	}
	shot("call")
	run("to the stored row",
		chromedp.Click(`#c2 a.row`, chromedp.ByQuery),
		chromedp.WaitVisible("#allrows", chromedp.ByID),
		chromedp.Evaluate(`location.hash`, &text),
	)
	if text != "#m2" {
		t.Errorf("row link landed on %q", text)
	}

	// A compacted session: the summary, and the rows it replaced on demand.
	run("compaction",
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.notes.String()),
		chromedp.WaitVisible("#showall", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#messages > li.msg").length`, &n),
		chromedp.Text("#size", &text, chromedp.ByID),
	)
	// 6 stored, a summary replacing the first 4: the agent gets 3.
	if n != 3 || !strings.Contains(text, "3 messages sent, standing for 6 stored (a summary replaces 4") {
		t.Errorf("compacted session: %d drawn, %q", n, text)
	}
	run("expand the compaction",
		chromedp.Click("a.expandcompaction", chromedp.ByQuery),
		chromedp.WaitVisible("#allrows", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#messages > li.msg").length`, &n),
	)
	if n != 7 {
		t.Errorf("every row of the compacted session: %d, want 7 (6 and the summary)", n)
	}
	shot("compaction-expanded")

	// Search across her sessions from the header; a result opens the
	// message in its session.
	run("search",
		chromedp.Navigate(f.srv.URL+"/ui/sessions"),
		chromedp.WaitVisible(`header input[name="q"]`, chromedp.ByQuery),
		chromedp.SendKeys(`header input[name="q"]`, "THREE day\n", chromedp.ByQuery),
		chromedp.WaitVisible("#hits", chromedp.ByID),
		chromedp.Text("#hitcount", &text, chromedp.ByID),
	)
	if text != "1 result" {
		t.Errorf("search: %q", text)
	}
	shot("search")
	run("open a result",
		chromedp.Click("#hits a.hit", chromedp.ByQuery),
		chromedp.WaitVisible("#allrows", chromedp.ByID),
		chromedp.Evaluate(`location.hash`, &text),
	)
	if text != "#m2" {
		t.Errorf("search result landed on %q, want #m2", text)
	}

	// Dark mode follows the system's preference.
	var bg string
	run("dark mode",
		emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}),
		chromedp.Navigate(f.srv.URL+"/ui/sessions/"+f.alice.String()),
		chromedp.WaitVisible("#messages", chromedp.ByID),
		chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &bg),
	)
	if bg != "rgb(22, 25, 29)" {
		t.Errorf("dark mode background %q", bg)
	}
	shot("dark")
	run("light again", emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "light"}}))

	// A phone: 390 px wide, nothing wider than the screen.
	for _, page := range []struct{ name, path, wait string }{
		{"mobile-sessions", "/ui/sessions", "#sessions"},
		{"mobile-session", "/ui/sessions/" + f.alice.String(), "#messages"},
		{"mobile-audit", "/ui/sessions/" + f.alice.String() + "/audit", "#timeline"},
	} {
		var width int
		run(page.name,
			emulation.SetDeviceMetricsOverride(390, 844, 2, true),
			chromedp.Navigate(f.srv.URL+page.path),
			chromedp.WaitVisible(page.wait, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth`, &width),
		)
		if page.name == "mobile-session" {
			// The "Go to message" control ends above the usage line (issue
			// 41: it covered it at 390 px).
			var gap float64
			run("jump above usage", chromedp.Evaluate(`document.querySelector("#usage").getBoundingClientRect().top - document.querySelector("form.jump").getBoundingClientRect().bottom`, &gap))
			if gap < 0 {
				t.Errorf("at 390 px the Go to message control overlaps the usage line by %.0f px", -gap)
			}
		}
		if width > 390 {
			var wide string
			_ = chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > 392).slice(0, 6).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join("; ")`, &wide))
			t.Errorf("%s: the page is %d px wide at 390 px; wider: %s", page.name, width, wide)
		}
		shot(page.name)
	}
}

// DNS rebinding in a real browser: a name the attacker controls, resolved to
// 127.0.0.1 (Chromium's host resolver rules stand in for the attacker's DNS),
// reaches a server started as the quick start does (--insecure-no-auth on
// loopback); the server refuses it, and still answers its own name.
func TestRebindingRefusedInBrowser(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	db := dbtest.NewSQLite(t)
	api, err := httpapi.New(httpapi.Options{Stores: storesOf(t, db, viewerT), UI: true, Insecure: true,
		AllowedHosts: httpapi.AllowedHosts("127.0.0.1:0", nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api)
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	// The attacker's DNS, as Chromium's host resolver rules.
	ctx := newBrowser(t, bin, 60*time.Second, chromedp.Flag("host-resolver-rules", "MAP rebind.attacker.example 127.0.0.1"))
	var text string
	if err := chromedp.Run(ctx,
		chromedp.Navigate("http://rebind.attacker.example:"+port+"/ui/login"),
		chromedp.WaitReady("body", chromedp.ByQuery),
		chromedp.Text("body", &text, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "host_not_allowed") || strings.Contains(text, "Sign in") {
		t.Errorf("the rebound name was served: %.300q", text)
	}
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 90)); err == nil {
		_ = os.WriteFile(filepath.Join("..", ".test-output", "ui", "rebinding-refused.png"), png, 0o644)
	}
	if err := chromedp.Run(ctx,
		chromedp.Navigate(srv.URL+"/ui/login"),
		chromedp.WaitVisible("#signin", chromedp.ByID),
	); err != nil {
		t.Fatalf("the server's own name: %v", err)
	}
}

package viewer_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
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
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(profileDir(t)), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

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
}

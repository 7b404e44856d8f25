package sdk_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/fakellm"
)

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// TestDocsGo builds every program in docs/go.md and runs it against the
// fake provider servers (and serve in process), each SDK pointed there by
// the environment variable it reads; a program must exit 0 and print what
// its "// → " comments say.
func TestDocsGo(t *testing.T) {
	root := filepath.Dir(fixtures.Dir())
	doc, err := os.ReadFile(filepath.Join(root, "docs", "go.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := goBlock.FindAllSubmatch(doc, -1)
	if len(blocks) < 6 {
		t.Fatalf("docs/go.md has %d go programs", len(blocks))
	}
	// The first program is the quick start: at most 15 lines, and it runs
	// through serve too when the one line that opens the store names serve.
	first := blocks[0][1]
	if n := bytes.Count(first, []byte("\n")); n > 15 || !bytes.Contains(first, []byte(`":memory:"`)) {
		t.Fatalf("docs/go.md's first program has %d lines (at most 15) and must open \":memory:\"", n)
	}
	serve := agenttest.NewServe(t, dbtest.NewSQLite(t), agenttest.Large)
	blocks = append(blocks, [][]byte{nil, bytes.Replace(first, []byte(`":memory:"`), []byte(strconv.Quote(serve)), 1)})
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	// Under the module root, so the programs import this checkout; "_" keeps
	// the directory out of ./... patterns.
	dir := filepath.Join(root, "_docsgo_"+hex.EncodeToString(rnd[:]))
	t.Cleanup(func() { os.RemoveAll(dir) })
	for i, b := range blocks {
		d := filepath.Join(dir, strconv.Itoa(i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "main.go"), b[1], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for i := range blocks {
		args = append(args, "./"+filepath.Base(dir)+"/"+strconv.Itoa(i))
	}
	build := exec.Command("go", args...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build of docs/go.md's programs: %v\n%s", err, out)
	}
	env := append(providerEnv(t), "REMSTORE_URL="+serve, "REMSTORE_API_KEY="+agenttest.APIKey)
	for i, b := range blocks {
		run := exec.Command(filepath.Join(bin, strconv.Itoa(i)))
		run.Env = env
		var out, stderr bytes.Buffer
		run.Stdout, run.Stderr = &out, &stderr
		if err := run.Run(); err != nil {
			t.Fatalf("program %d of docs/go.md: %v\n%s%s", i, err, out.String(), stderr.String())
		}
		for _, line := range strings.Split(string(b[1]), "\n") {
			if _, want, ok := strings.Cut(line, "// → "); ok && !strings.Contains(out.String(), strings.TrimSpace(want)) {
				t.Errorf("program %d printed\n%s\nwithout %q", i, out.String(), want)
			}
		}
	}
}

// TestExamples runs each program under examples/ for one prompt on the
// embedded store against the fake provider servers.
func TestExamples(t *testing.T) {
	root := filepath.Dir(fixtures.Dir())
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./examples/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./examples/...: %v\n%s", err, out)
	}
	env := providerEnv(t)
	for _, name := range []string{"openai-chat", "anthropic-chat", "genai-chat", "langchain-chat"} {
		db := filepath.Join(t.TempDir(), "ex.db")
		run := exec.Command(filepath.Join(bin, name), "-db", db, "-session", "trip", fakellm.Prompts[0], fakellm.Prompts[2])
		run.Env = env
		out, err := run.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Here is your Lisbon plan") || !strings.Contains(string(out), "You are welcome.") {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
}

// providerEnv starts the fake OpenAI, Anthropic and Gemini servers for the
// test and returns the environment that points each SDK at its fake.
func providerEnv(t *testing.T) []string {
	start := func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	return append(os.Environ(), "OPENAI_BASE_URL="+start(fakellm.OpenAI(&fakellm.Recorder{})), "OPENAI_API_KEY=k",
		"ANTHROPIC_BASE_URL="+start(fakellm.Anthropic(&fakellm.Recorder{})), "ANTHROPIC_API_KEY=k",
		"GOOGLE_GEMINI_BASE_URL="+start(fakellm.Gemini(&fakellm.Recorder{})), "GOOGLE_API_KEY=k", "GEMINI_API_KEY=")
}

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
)

// readmeBlock is one ```sh block of README.md and what its "# → ..."
// comments claim its output contains.
type readmeBlock struct {
	line   int // where the block starts in the README
	code   string
	claims []string
	skip   string // the reason of a preceding <!-- not run: ... -->
}

// readmeBlocks extracts the sh blocks of path in order.
func readmeBlocks(t *testing.T, path string) []readmeBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []readmeBlock
	var cur *readmeBlock
	skip := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "<!-- not run:"):
			skip = strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, "<!-- not run:")), "-->")
		case cur == nil && strings.TrimSpace(line) == "```sh":
			cur = &readmeBlock{line: n, skip: skip}
			skip = ""
		case cur == nil && strings.HasPrefix(line, "```"):
			skip = "" // another language: a skip note never carries over
		case cur != nil && strings.TrimSpace(line) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.code += line + "\n"
			if _, claim, ok := strings.Cut(line, "# → "); ok {
				cur.claims = append(cur.claims, strings.TrimSpace(claim))
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// The README runs as written: every sh block, in order, in one shell with a
// clean HOME (as a newcomer who pastes them into one terminal), once on the
// embedded SQLite default and once on a throwaway PostgreSQL. Each block must
// exit 0 and print what its "# → ..." comments say.
func TestReadme(t *testing.T) {
	blocks := readmeBlocks(t, "../../README.md")
	if len(blocks) < 10 {
		t.Fatalf("only %d sh blocks found in README.md", len(blocks))
	}
	bin := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "remstore"), ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	goEnv := map[string]string{}
	for _, k := range []string{"GOPATH", "GOMODCACHE", "GOCACHE", "GOROOT"} {
		v, err := exec.Command("go", "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		goEnv[k] = strings.TrimSpace(string(v))
	}
	repo, _ := filepath.Abs("../..")
	// The embedded half runs always; the PostgreSQL half needs the test
	// server (skipped without it, failed under REMSTORE_REQUIRE_ALL), and
	// a skip there no longer skips the embedded half (issue 43).
	for _, pass := range []struct {
		name string
		url  func(testing.TB) string
	}{{"embedded", func(testing.TB) string { return "" }}, {"postgres", dbtest.NewPostgresURL}} {
		t.Run(pass.name, func(t *testing.T) {
			pass := struct{ name, db string }{pass.name, pass.url(t)}
			home := t.TempDir()
			var script strings.Builder
			script.WriteString("set -euo pipefail\ncd " + strconv.Quote(repo) + "\n")
			// Twice over, in the same HOME and database: a reader who pastes
			// the README again must not meet what the first paste left.
			for run := 0; run < 2; run++ {
				for i, b := range blocks {
					if b.skip != "" {
						continue
					}
					fmt.Fprintf(&script, "printf '\\n=== BLOCK %d\\n'\n%s", run*len(blocks)+i, b.code)
				}
			}
			script.WriteString("printf '\\n=== END\\n'\n")
			cmd := exec.Command("bash", "-c", script.String())
			// GOBIN: the README's go install lands in the test's own bin.
			env := []string{"HOME=" + home, "GOBIN=" + bin, "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}
			for k, v := range goEnv {
				env = append(env, k+"="+v)
			}
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				if k == "HOME" || k == "PATH" || k == "GOBIN" || strings.HasPrefix(k, "REMSTORE_") || strings.HasPrefix(k, "POSTGRES") ||
					strings.HasPrefix(k, "DEBUG_AUDIT") || strings.HasPrefix(k, "XDG_") || goEnv[k] != "" {
					continue
				}
				env = append(env, kv)
			}
			if pass.db != "" {
				env = append(env, "REMSTORE_DB="+pass.db)
			}
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			segments := map[int]string{}
			last := -1
			for _, part := range strings.Split(string(out), "\n=== ")[1:] {
				head, body, _ := strings.Cut(part, "\n")
				if n, ok := strings.CutPrefix(head, "BLOCK "); ok {
					last, _ = strconv.Atoi(n)
					segments[last] = body
				}
			}
			if err != nil || !strings.Contains(string(out), "\n=== END\n") {
				b := blocks[max(last, 0)%len(blocks)]
				t.Fatalf("README block at line %d failed (%v):\n%s\noutput:\n%s", b.line, err, b.code, segments[last])
			}
			ran := 0
			for i, b := range blocks {
				if b.skip != "" {
					continue
				}
				ran++
				for run := 0; run < 2; run++ {
					for _, c := range b.claims {
						if seg := segments[run*len(blocks)+i]; !claimHolds(seg, c) {
							t.Errorf("README block at line %d, paste %d: output lacks %q:\n%s", b.line, run+1, c, seg)
						}
					}
				}
			}
			t.Logf("%d blocks ran (%d skipped with a reason)", ran, len(blocks)-ran)
		})
	}
}

// claimHolds: a number must be a whole line of the output (a count printed
// by wc or grep -c), anything else a substring of it.
func claimHolds(out, claim string) bool {
	if _, err := strconv.Atoi(claim); err == nil {
		for _, l := range strings.Split(out, "\n") {
			if strings.TrimSpace(l) == claim {
				return true
			}
		}
		return false
	}
	return strings.Contains(out, claim)
}

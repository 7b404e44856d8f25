package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/help/*.txt")

var commands = []string{"", "demo", "env", "health", "compress", "store", "load", "lookup", "convert", "audit", "audit show",
	"export", "import", "migrate", "completion", "sessions", "sessions list", "sessions get", "sessions status",
	"sessions update", "sessions delete", "sessions expire", "sessions fork", "sessions compact", "sessions usage", "serve", "search", "mcp", "bench",
	"citus", "citus distribute", "citus undistribute", "citus status"}

// Golden help output: every command documents itself with an example.
func TestHelpGolden(t *testing.T) {
	t.Parallel()
	for _, c := range commands {
		name := strings.ReplaceAll(c, " ", "_")
		if name == "" {
			name = "remstore"
		}
		t.Run(name, func(t *testing.T) {
			args := append(strings.Fields(c), "--help")
			r := run(t, map[string]string{}, "", args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if c != "" && c != "audit" && c != "completion" && c != "sessions" && !strings.Contains(r.stdout, "Examples:") {
				t.Errorf("%q help has no example", c)
			}
			p := filepath.Join("testdata", "help", name+".txt")
			if *update {
				_ = os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(r.stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("%v (go test ./internal/cli -run TestHelpGolden -update)", err)
			}
			if r.stdout != string(want) {
				t.Errorf("help differs from %s:\n%s", p, r.stdout)
			}
		})
	}
	// every command of the root help has a golden file
	root := run(t, map[string]string{}, "", "--help").stdout
	listed := regexp.MustCompile(`(?m)^  (\w+)\s{2,}`).FindAllStringSubmatch(root[strings.Index(root, "Available Commands:"):], -1)
	for _, m := range listed {
		found := m[1] == "help"
		for _, c := range commands {
			found = found || c == m[1]
		}
		if !found {
			t.Errorf("command %q has no golden help", m[1])
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	if r := run(t, nil, "", "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "remstore version ") {
		t.Fatalf("%d %q", r.code, r.stdout)
	}
	if r := run(t, nil, "", "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Fatalf("completion: %d", r.code)
	}
}

// Help is for people who never saw the project's insides (issue 43): no
// "the peer", no contract section numbers, no paths outside a clone.
func TestHelpSpeaksToStrangers(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/help/*.txt")
	if err != nil || len(files) < 10 {
		t.Fatalf("help goldens: %v %d", err, len(files))
	}
	insider := regexp.MustCompile(`(?i)\bthe peer\b|\bpeer's\b|\bSPEC §|SPEC\.md|\.\./shared`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := insider.FindString(line); m != "" {
				t.Errorf("%s:%d says %q: %s", f, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}

// docs/reference.md is what `remstore reference` prints from the code: the
// settings' table, the flags, the exit codes and the OpenAPI routes.
func TestReferenceIsCurrent(t *testing.T) {
	t.Parallel()
	r := run(t, map[string]string{}, "", "reference")
	if r.code != 0 {
		t.Fatalf("reference: %d %s", r.code, r.stderr)
	}
	const path = "../../docs/reference.md"
	if *update {
		if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != r.stdout {
		t.Fatalf("docs/reference.md is stale: run go test ./internal/cli -run TestReferenceIsCurrent -update")
	}
	// Independent of the generator: every variable the code reads by name
	// in settings.go, and every route, appears.
	src, err := os.ReadFile("../../settings/settings.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`Key\w+\s*=\s*"([A-Z_]+)"`).FindAllStringSubmatch(string(src), -1) {
		if !strings.Contains(r.stdout, "| `"+m[1]+"` |") {
			t.Errorf("reference has no row for %s", m[1])
		}
	}
	for _, route := range []string{"POST | `/v1/sessions/{id}/messages`", "GET | `/v1/lookup`", "GET | `/healthz`"} {
		if !strings.Contains(r.stdout, "| "+route+" |") {
			t.Errorf("reference has no route %s", route)
		}
	}
	for _, cmd := range []string{"### remstore store", "### remstore sessions fork", "`--url-file string`", "| 3 |"} {
		if !strings.Contains(r.stdout, cmd) {
			t.Errorf("reference lacks %q", cmd)
		}
	}
}

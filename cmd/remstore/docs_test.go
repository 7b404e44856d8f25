package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and the user docs speak to people who never saw the project's
// insides (issue 43): no "the peer", no contract section numbers, no paths
// outside a clone. docs/interop.md defines "peer" for its tables, and
// CONTRIBUTING.md is for people who work on remstore.
func TestDocsSpeakToStrangers(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../README.md", "../../python/README.md", "../../CHANGELOG.md")
	insider := regexp.MustCompile(`(?i)\bthe peer\b|\bpeer's\b|\bSPEC §|SPEC\.md|\.\./shared`)
	checked := 0
	for _, f := range files {
		if filepath.Base(f) == "interop.md" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if m := insider.FindString(line); m != "" {
				t.Errorf("%s:%d says %q", f, i+1, m)
			}
		}
	}
	if checked < 10 {
		t.Fatalf("only %d docs checked", checked)
	}
	// The README's first screen says what remstore is for, before any test
	// internals.
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Join(strings.SplitN(string(b), "\n", 41)[:40], "\n")
	for _, want := range []string{"conversations", "REM LOOKUP", "go run ./cmd/remstore demo", "make test"} {
		if !strings.Contains(first, want) {
			t.Errorf("the README's first 40 lines lack %q", want)
		}
	}
	for _, not := range []string{"pgvector", "Citus cluster", "staticcheck", "REMSTORE_REQUIRE_ALL"} {
		if strings.Contains(first, not) {
			t.Errorf("the README's first 40 lines speak of %q (CONTRIBUTING.md's matter)", not)
		}
	}
}

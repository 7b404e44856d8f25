package remstore_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// insiders are words a stranger reading godoc cannot follow: the contract's
// section numbers, the tracker's issue numbers, "the peer" (the Python
// service, by its name).
var insiders = regexp.MustCompile(`SPEC|§|\b[Ii]ssues? \d+|\b[Tt]he peer\b|\bpeer's\b`)

// TestDocsSpeakToStrangers reads `go doc -all` of every package a program
// imports (not internal/, not examples/) for words only the project's
// developers know.
func TestDocsSpeakToStrangers(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "/internal/") || strings.Contains(p, "/examples/") || strings.Contains(p, "_docsgo") {
			continue
		}
		doc, err := exec.Command("go", "doc", "-all", p).Output()
		if err != nil {
			t.Fatalf("go doc -all %s: %v", p, err)
		}
		n++
		for i, line := range strings.Split(string(doc), "\n") {
			if m := insiders.FindString(line); m != "" {
				t.Errorf("go doc -all %s, line %d says %q: %s", p, i+1, m, strings.TrimSpace(line))
			}
		}
	}
	if n < 15 {
		t.Fatalf("read the docs of %d packages", n)
	}
}

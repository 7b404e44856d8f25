package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// insiderWords are what only someone who followed the project's own history
// or its test setup could read: the tracker's numbers, schema versions,
// review labels, the folder beside a checkout that only the project's CI
// has, and names of its internals. docs/concepts.md defines the words a
// stranger does need (the Python service, T, REM LOOKUP, a pop, the floor).
var insiderWords = []struct {
	name string
	re   *regexp.Regexp
}{
	{"an issue number", regexp.MustCompile(`(?i)\bissues? #?\d+`)},
	{"a migration number", regexp.MustCompile(`(?i)\bmigrations? \d+`)},
	{"a path outside a clone", regexp.MustCompile(`\.\./shared`)},
	{"an attack label", regexp.MustCompile(`\b[HML]\d{1,2}\b`)},
	{"an attack's ordinal", regexp.MustCompile(`(?i)\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) attack\b`)},
	{"an insider's name for the baseline", regexp.MustCompile(`(?i)native-pgx floor`)},
	{"an insider's name for the reference", regexp.MustCompile(`(?i)\bthe oracle\b`)},
	{"a library's internals", regexp.MustCompile(`(?i)MCPToolset over fastmcp`)},
	{"a migration's name", regexp.MustCompile(`store_batch_function`)},
	{"a change the reader never saw", regexp.MustCompile(`(?i)\bbefore this change\b`)},
	{"the test code's name for the Python service", regexp.MustCompile(`(?i)\bthe peer\b|\bpeer's\b`)},
	{"the contract's section numbers", regexp.MustCompile(`\bSPEC §|SPEC\.md`)},
}

// contributorDocs are for people who change remstore (how it is tested,
// laid out and released) or who follow its history; they may speak of
// ../shared, migration numbers and the peer. They live at the top of the
// repository, beside README.md; every page under docs/ is user-facing.
var contributorDocs = []string{"CONTRIBUTING.md", "ARCHITECTURE.md", "CHANGELOG.md"}

// allowedWord is the one exception: docs/reliability.md's section headings
// keep the reviews' ordinals ("## The fourth attack: ...") as section names;
// the page says what an attack is before the first of them.
func allowedWord(file, line, name string) bool {
	return name == "an attack's ordinal" && filepath.Base(file) == "reliability.md" && strings.HasPrefix(line, "## ")
}

// What a stranger reads (the README, the user docs, every command's --help,
// the viewer's pages) uses no word only insiders know.
func TestWordsForStrangers(t *testing.T) {
	t.Parallel()
	check := func(where, text string) {
		for i, line := range strings.Split(text, "\n") {
			for _, w := range insiderWords {
				for _, m := range w.re.FindAllString(line, -1) {
					if allowedWord(where, line, w.name) {
						continue
					}
					t.Errorf("%s:%d: %s: %q", where, i+1, w.name, m)
				}
			}
		}
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	docs, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(docs) < 10 {
		t.Fatalf("docs: %v %d", err, len(docs))
	}
	docs = append(docs, "../../README.md", "../../python/README.md")
	for _, f := range docs {
		for _, c := range contributorDocs {
			if filepath.Base(f) == c {
				t.Fatalf("%s is listed as a contributor doc but is checked as a user doc", f)
			}
		}
		check(f, read(f))
	}

	templates, err := filepath.Glob("../../viewer/templates/*.html")
	if err != nil || len(templates) < 5 {
		t.Fatalf("viewer templates: %v %d", err, len(templates))
	}
	for _, f := range templates {
		check(f, read(f))
	}

	// Every command's --help, found by walking "Available Commands:" from
	// the root, so a new command is checked without being listed here.
	seen := map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		name := strings.Join(path, " ")
		if seen[name] {
			return
		}
		seen[name] = true
		r := run(t, map[string]string{}, "", append(append([]string{}, path...), "--help")...)
		if r.code != 0 {
			t.Errorf("%q --help: exit %d: %s", name, r.code, r.stderr)
			return
		}
		check(strings.TrimSpace("remstore "+name)+" --help", r.stdout)
		i := strings.Index(r.stdout, "Available Commands:")
		if i < 0 {
			return
		}
		block := r.stdout[i:]
		if j := strings.Index(block, "\n\n"); j >= 0 {
			block = block[:j]
		}
		for _, m := range regexp.MustCompile(`(?m)^  ([\w-]+)\s{2,}`).FindAllStringSubmatch(block, -1) {
			if m[1] != "help" {
				walk(append(append([]string{}, path...), m[1]))
			}
		}
	}
	walk(nil)
	for _, c := range commands { // the golden list, in case a command is hidden from the root's
		walk(strings.Fields(c))
	}
	if len(seen) < len(commands) {
		t.Errorf("only %d commands' help checked", len(seen))
	}
}

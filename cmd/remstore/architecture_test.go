package main

import (
	"bufio"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// ARCHITECTURE.md's table is the import graph: a package imports exactly the
// remstore packages its row names (helpers, fixtures and examples aside),
// and the binary depends on no model SDK.
func TestArchitecture(t *testing.T) {
	const module = "github.com/remstore/remstore"
	f, err := os.Open("../../ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z/.]+)` \\|[^|]*\\|(.*)\\|$")
	allowed := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := row.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		var deps []string
		for _, d := range regexp.MustCompile("`([a-z/]+)`").FindAllStringSubmatch(m[2], -1) {
			deps = append(deps, d[1])
		}
		allowed[m[1]] = deps
	}
	if len(allowed) < 20 {
		t.Fatalf("only %d rows read from ARCHITECTURE.md", len(allowed))
	}
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	helper := regexp.MustCompile(`^(internal/(dbtest|fakellm|faulttest|badinput|agenttest|memtest|viewtest|cmd/.*)|fixtures|examples/.*)$`)
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if name == "" {
			name = "." // the root package, remstore
		}
		if helper.MatchString(name) {
			continue
		}
		want, ok := allowed[name]
		if !ok {
			t.Errorf("package %s has no row in ARCHITECTURE.md", name)
			continue
		}
		seen[name] = true
		var got []string
		for _, imp := range p.Imports {
			if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
				got = append(got, rest)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		for _, g := range got {
			if !slices.Contains(want, g) {
				t.Errorf("%s imports %s, which its row in ARCHITECTURE.md does not name", name, g)
			}
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("ARCHITECTURE.md says %s imports %s; it does not (update the row)", name, w)
			}
		}
	}
	for name := range allowed {
		if !seen[name] {
			t.Errorf("ARCHITECTURE.md names %s, which is no package", name)
		}
	}
	// The binary builds without any model SDK: a user of the command line
	// downloads and compiles none of them.
	deps, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, sdk := range []string{"github.com/openai/", "github.com/anthropics/", "google.golang.org/genai", "github.com/tmc/langchaingo", module + "/sdk"} {
		if strings.Contains(string(deps), sdk) {
			t.Errorf("cmd/remstore depends on %s", sdk)
		}
	}
}

// No function outside tests grows past 120 lines (issue 44): a longer one
// holds more than one job; split it where its comments already do.
func TestFunctionsStayShort(t *testing.T) {
	const limit = 120
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "../.." && (strings.HasPrefix(n, ".") || n == "interop" || n == "python" || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		checked++
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > limit {
				t.Errorf("%s: %s is %d lines (at most %d)", strings.TrimPrefix(p, "../../"), fn.Name.Name, n, limit)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d Go files read", checked)
	}
}

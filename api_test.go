package remstore_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/api.txt from the source")

// exported lists a package's exported API, one line per identifier:
// functions and methods with their signatures, types, constants and
// variables by name.
func exported(t *testing.T, dir, importPath string, files []string) []string {
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	var out []string
	add := func(s string) { out = append(out, importPath+" "+s) }
	typeStr := func(e ast.Expr) string {
		var b bytes.Buffer
		_ = printer.Fprint(&b, fset, e)
		return strings.Join(strings.Fields(b.String()), " ")
	}
	for _, f := range parsed {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				name := d.Name.Name
				if d.Recv != nil {
					recv := typeStr(d.Recv.List[0].Type)
					if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
						continue
					}
					name = "(" + recv + ")." + name
				}
				add("func " + name + strings.TrimPrefix(typeStr(d.Type), "func"))
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							add("type " + s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								add(strings.ToLower(d.Tok.String()) + " " + n.Name)
							}
						}
					}
				}
			}
		}
	}
	return out
}

// TestExportedAPI holds the exported identifiers of every importable
// package to testdata/api.txt: an addition or a removal is a reviewed
// change of that file (go test -run TestExportedAPI -update).
func TestExportedAPI(t *testing.T) {
	list, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}} {{join .GoFiles ","}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		path, dir, files := f[0], f[1], strings.Split(f[2], ",")
		if strings.Contains(path, "/internal/") || strings.Contains(path, "/examples/") || strings.Contains(path, "_docsgo") {
			continue
		}
		got = append(got, exported(t, dir, path, files)...)
	}
	sort.Strings(got)
	text := strings.Join(got, "\n") + "\n"
	golden := filepath.Join("testdata", "api.txt")
	if *update {
		if err := os.WriteFile(golden, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != text {
		w, g := strings.Split(string(want), "\n"), got
		t.Errorf("the exported API changed (review, then go test -run TestExportedAPI -update):\n%s", diff(w, g))
	}
	// The oracle: go doc lists the root package's top-level identifiers too.
	short, err := exec.Command("go", "doc", "-all", "github.com/remstore/remstore").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		f := strings.Fields(g)
		if f[0] != "github.com/remstore/remstore" || f[1] == "func" && strings.HasPrefix(f[2], "(") {
			continue
		}
		name := strings.SplitN(f[2], "(", 2)[0]
		if !bytes.Contains(short, []byte(name)) {
			t.Errorf("go doc -all does not list %s", name)
		}
	}
}

// diff lists the lines only one side has.
func diff(want, got []string) string {
	in := func(s []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, x := range got {
		if !w[x] && x != "" {
			b.WriteString("+ " + x + "\n")
		}
	}
	for _, x := range want {
		if !g[x] && x != "" {
			b.WriteString("- " + x + "\n")
		}
	}
	return b.String()
}

package settings

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
)

// Every Key constant is a variable a user can set, so each has a line in
// Variables (which the reference page is generated from).
func TestEveryKeyListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "settings.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		vs, ok := node.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "Key") || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok {
			return true
		}
		name, _ := strconv.Unquote(lit.Value)
		n++
		if !known(name) {
			t.Errorf("%s (%s) has no line in Variables()", vs.Names[0].Name, name)
		}
		return true
	})
	if n != len(Variables()) {
		t.Errorf("%d Key constants, %d variables listed", n, len(Variables()))
	}
}

func TestLocalURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8088": "http://127.0.0.1:8088",
		":8088":          "http://127.0.0.1:8088",
		"0.0.0.0:9000":   "http://127.0.0.1:9000",
		"[::]:9000":      "http://127.0.0.1:9000",
		"[::1]:9000":     "http://[::1]:9000",
		"example.org:80": "http://example.org:80",
	} {
		if got := LocalURL(addr); got != want {
			t.Errorf("LocalURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

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

// remstore env prints every variable remstore reads (it once left out six
// of them, though the README says it shows every setting): Shown has a
// line for each of Variables, in its order, and never a secret.
func TestShownListsEvery(t *testing.T) {
	env := map[string]string{KeyAPIKeys: "sekrit-key-0123456789=alice,other-key-0123456789", KeyAPIKey: "client-key-0123456789",
		KeyPostgresURL: "postgres://u:pw@db/app", KeyOTLPEndpoint: "http://localhost:4318", KeyMaxSessions: "7"}
	cfg, err := Load(Options{Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, NoDotEnv: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := cfg.Shown()
	vars := Variables()
	if len(rows) != len(vars) {
		t.Fatalf("%d rows for %d variables", len(rows), len(vars))
	}
	for i, r := range rows {
		if r.Name != vars[i].Name || r.Source == "" {
			t.Errorf("row %d: %+v, want %s with a source", i, r, vars[i].Name)
		}
		for _, secret := range []string{"sekrit", "other-key", "client-key", ":pw@"} {
			if strings.Contains(r.Value, secret) {
				t.Errorf("%s shows a secret: %q", r.Name, r.Value)
			}
		}
	}
	want := map[string]string{KeyAPIKeys: "(2 keys, masked)", KeyAPIKey: "(1 key, masked)", KeyMaxSessions: "7",
		KeyOTLPEndpoint: "http://localhost:4318", KeyPostgresURL: "postgres://u:xxxxx@db/app"}
	for _, r := range rows {
		if w, ok := want[r.Name]; ok && r.Value != w {
			t.Errorf("%s: %q, want %q", r.Name, r.Value, w)
		}
	}
}

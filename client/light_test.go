package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the modules a program that only calls serve must not compile.
var heavy = []string{"modernc.org/sqlite", "github.com/jackc/pgx", "github.com/uptrace/bun", "gopkg.in/yaml", "go.yaml.in/yaml"}

// goList is `go list` of args, one line each.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

// The client, the SDK helpers and the wire types build without SQLite,
// PostgreSQL's driver, bun or YAML: a backend that only calls serve does
// not compile the server. A model SDK adapter may pull what its SDK itself
// pulls (anthropic-sdk-go reads YAML), nothing more.
func TestLightImports(t *testing.T) {
	pkgs := goList(t, "github.com/remstore/remstore/client", "github.com/remstore/remstore/models", "github.com/remstore/remstore/sdk/...")
	if len(pkgs) < 6 {
		t.Fatalf("packages %v", pkgs)
	}
	for _, p := range pkgs {
		sdkDeps := map[string]bool{}
		for _, imp := range goList(t, "-f", `{{join .Imports "\n"}}`, p) {
			if strings.Contains(imp, ".") && !strings.HasPrefix(imp, "github.com/remstore/remstore") {
				for _, d := range goList(t, "-deps", imp) {
					sdkDeps[d] = true
				}
			}
		}
		for _, d := range goList(t, "-deps", p) {
			for _, h := range heavy {
				if strings.HasPrefix(d, h) && !sdkDeps[d] {
					t.Errorf("%s imports %s", p, d)
				}
			}
		}
	}
}

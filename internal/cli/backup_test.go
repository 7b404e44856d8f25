package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/internal/dbtest"
)

// pgTool finds a PostgreSQL client program of the test server's version.
func pgTool(t *testing.T, name string) string {
	t.Helper()
	if bin := os.Getenv("REMSTORE_TEST_PG_BIN"); bin != "" {
		if p := filepath.Join(bin, name); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (REMSTORE_TEST_PG_BIN or PATH): %v", name, err)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// The backup procedures of docs/operations.md, run as written: pg_dump -Fc
// and pg_restore into a new database, and remstore export / import into
// another; each restored database exports the same bytes as the original,
// loads and looks up the same, and the next store continues the sessions'
// positions (the positions table came along).
func TestBackupAndRestore(t *testing.T) {
	t.Parallel()
	src := dbtest.NewDatabaseURL(t)
	hist, err := os.ReadFile(fixtures.Path("readme", "chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"alice", "bob"} {
		if r := run(t, map[string]string{"REMSTORE_DB": src, "REMSTORE_USER_ID": u}, string(hist), "store", "--session-id", "chat-1"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	export := func(db string) string {
		t.Helper()
		r := run(t, map[string]string{"REMSTORE_DB": db}, "", "export", "--all-tenants")
		if r.code != 0 || strings.Count(r.stdout, "\n") != 14 {
			t.Fatalf("export: %d %q (%d lines)", r.code, r.stderr, strings.Count(r.stdout, "\n"))
		}
		return r.stdout
	}
	want := export(src)
	dir := t.TempDir()

	// 1. pg_dump / pg_restore.
	dump := filepath.Join(dir, "remstore.dump")
	if out, err := exec.Command(pgTool(t, "pg_dump"), "-Fc", "-d", src, "-f", dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	viaDump := dbtest.NewDatabaseURL(t)
	if out, err := exec.Command(pgTool(t, "pg_restore"), "--no-owner", "--exit-on-error", "-d", viaDump, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}

	// 2. remstore export / import into an empty database.
	backup := filepath.Join(dir, "backup.jsonl")
	if r := run(t, map[string]string{"REMSTORE_DB": src}, "", "export", "--all-tenants", "-o", backup); r.code != 0 {
		t.Fatal(r.stderr)
	}
	viaExport := dbtest.NewDatabaseURL(t)
	if r := run(t, map[string]string{"REMSTORE_DB": viaExport}, "", "migrate", "up"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, map[string]string{"REMSTORE_DB": viaExport}, "", "import", backup, "--all-tenants", "--atomic"); r.code != 0 {
		t.Fatal(r.stderr)
	}

	for name, db := range map[string]string{"pg_restore": viaDump, "import": viaExport} {
		if got := export(db); got != want {
			t.Errorf("%s: the restored database exports other bytes", name)
		}
		env := map[string]string{"REMSTORE_DB": db, "REMSTORE_USER_ID": "alice"}
		if r := run(t, env, "", "lookup", "--session-id", "chat-1", "--index", "1"); r.code != 0 || !strings.HasPrefix(r.stdout, "Here is a plan") {
			t.Errorf("%s: lookup %d %q", name, r.code, r.stderr)
		}
		// The next turn continues at position 6 in the restored database.
		r := run(t, env, `[{"role":"user","content":"and the hotel?"}]`, "store", "--session-id", "chat-1")
		if r.code != 0 || !strings.Contains(r.stdout, "-msg-6\"") {
			t.Errorf("%s: store after restore: %d %q %q", name, r.code, r.stdout, r.stderr)
		}
	}
}

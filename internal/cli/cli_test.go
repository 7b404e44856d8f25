package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/internal/cli"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	code := cli.RunWith(context.Background(), cli.Options{Getenv: getenv, Dir: t.TempDir()}, args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "demo.db")}
	r := run(t, env, "", "demo")
	if r.code != 0 {
		t.Fatalf("demo exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"== 1. store", "REM LOOKUP session-", "equal to the stored text: true", "response tool-call, tool-call, text"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// store -> load -> lookup through the CLI on both databases, with the exit
// codes of the contract.
func TestStoreLoadLookup(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"REMSTORE_DB": d.URL(t), "REMSTORE_TRUNCATE_LENGTH": "5"}
			in := `[{"role":"user","content":"hi"},{"role":"assistant","content":"0123456789abcdef"}]`
			r := run(t, env, in, "store", "--session-id", "s1", "--user-id", "alice")
			if r.code != 0 {
				t.Fatalf("store: %d %s", r.code, r.stderr)
			}
			var st struct {
				SessionID string   `json:"session_id"`
				Stored    int      `json:"stored"`
				Keys      []string `json:"keys"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &st); err != nil || st.Stored != 2 || len(st.Keys) != 2 {
				t.Fatalf("store output %q: %v", r.stdout, err)
			}
			r = run(t, env, "", "load", "--session-id", "s1", "--user-id", "alice")
			var hist []map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &hist); err != nil || len(hist) != 2 || hist[1]["_entity_key"] != st.Keys[1] {
				t.Fatalf("load: %q %v", r.stdout, err)
			}
			r = run(t, env, "", "lookup", "--user-id", "alice", "REM LOOKUP "+st.Keys[1])
			if r.code != 0 || r.stdout != "0123456789abcdef" {
				t.Fatalf("lookup: %d %q %s", r.code, r.stdout, r.stderr)
			}
			r = run(t, env, "", "lookup", "--user-id", "bob", st.Keys[1])
			if r.code != cli.ExitNotFound || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("other tenant lookup: %d %q", r.code, r.stderr)
			}
			r = run(t, env, "", "lookup", "--user-id", "alice", "not-a-key")
			if r.code != cli.ExitUsage {
				t.Fatalf("bad key: %d %q", r.code, r.stderr)
			}
			r = run(t, env, `[{"role":"user","content":"a\u0000b"}]`, "store", "--session-id", "s1")
			if r.code != cli.ExitUsage || !strings.Contains(r.stderr, `message 0: field "content": contains a NUL byte`) {
				t.Fatalf("NUL: %d %q", r.code, r.stderr)
			}
			r = run(t, env, "", "load", "--session-id", "s1", "--user-id", "alice", "--format", "pydantic-ai", "--system-prompt", "S")
			if r.code != 0 || !strings.Contains(r.stdout, `"part_kind":"system-prompt"`) {
				t.Fatalf("pydantic-ai load: %d %s", r.code, r.stderr)
			}
		})
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "x.db")}
	cases := []struct {
		args  []string
		stdin string
		code  int
		want  string
	}{
		{[]string{"compress", "--session-id", "s"}, `[{"role":"user"}] trailing`, 2, "trailing data"},
		{[]string{"compress", "--session-id", "s"}, `{"role":"user"}`, 2, "expected a JSON array"},
		{[]string{"compress", "--session-id", "s"}, `[{"role":"user","role":"x"}]`, 2, "duplicate key"},
		{[]string{"compress", "--session-id", "s"}, "[{\"role\":\"user\",\"content\":\"\xff\"}]", 2, `field "content": invalid UTF-8`},
		{[]string{"compress"}, `[]`, 2, "session-id"},
		{[]string{"nope"}, ``, 2, "unknown command"},
		// The flag the user typed is named, and the driver's reason survives.
		{[]string{"--db", "postgres://u:secret@127.0.0.1:1/x?connect_timeout=2", "load", "--session-id", "s"}, ``, 3, "connection refused"},
		{[]string{"--db", "postgres://u:secret@127.0.0.1:1/x?connect_timeout=2", "load", "--session-id", "s"}, ``, 3, "--db: storage unavailable"},
		{[]string{"--db", "mysql://x", "load", "--session-id", "s"}, ``, 2, "--db: unsupported database scheme"},
		{[]string{"--truncate-length", "-5", "load", "--session-id", "s"}, ``, 2, "--truncate-length: must be"},
		{[]string{"--truncate-length", "4611686018427387904", "load", "--session-id", "s"}, ``, 2, "--truncate-length: must be"},
	}
	for _, tc := range cases {
		r := run(t, env, tc.stdin, tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "secret") {
			t.Errorf("%v: exit %d stderr %q; want exit %d containing %q on one line", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
}

func TestEnvPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("REMSTORE_USER_ID=from-dotenv\nREMSTORE_TRUNCATE_LENGTH=7\nPOSTGRES__CONNECTION_STRING=postgres://u:hunter2@db/app\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "a", "b")
	_ = os.MkdirAll(sub, 0o755)
	var out, errb bytes.Buffer
	getenv := func(k string) (string, bool) {
		if k == "REMSTORE_TRUNCATE_LENGTH" {
			return "9", true
		}
		return "", false
	}
	code := cli.RunWith(context.Background(), cli.Options{Getenv: getenv, Dir: sub}, []string{"env", "--json", "--user-id", "from-flag"}, nil, &out, &errb)
	if code != 0 {
		t.Fatal(errb.String())
	}
	var got struct {
		Settings []struct{ Name, Value, Source string }
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]string{
		"REMSTORE_USER_ID":         {"from-flag", "flag"},
		"REMSTORE_TRUNCATE_LENGTH": {"9", "env"},
		"REMSTORE_DB":              {"postgres://u:xxxxx@db/app", ".env"},
	}
	for _, s := range got.Settings {
		if w, ok := want[s.Name]; ok && (s.Value != w[0] || !strings.HasPrefix(s.Source, w[1])) {
			t.Errorf("%s = %q from %q, want %q from %q", s.Name, s.Value, s.Source, w[0], w[1])
		}
	}
	if strings.Contains(out.String(), "hunter2") {
		t.Error("password printed")
	}
}

func TestAuditFromLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"REMSTORE_DB": filepath.Join(dir, "a.db"), "DEBUG_AUDIT_DIR": dir}
	if r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "../escape"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// gate off: no file
	run(t, env, "", "load", "--session-id", "../escape", "--format", "pydantic-ai", "--agent-name", "a")
	if r := run(t, env, "", "audit", "show", "../escape", "--dir", dir); r.code != cli.ExitNotFound {
		t.Fatalf("audit file written with the gate off: %d %s", r.code, r.stdout)
	}
	env["DEBUG_AUDIT_SESSION"] = "1"
	for range 2 {
		if r := run(t, env, "", "load", "--session-id", "../escape", "--format", "pydantic-ai", "--agent-name", "a", "--prompt", "p"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	r := run(t, env, "", "audit", "show", "../escape", "--dir", dir, "--json")
	var f struct {
		SessionID   string           `json:"session_id"`
		Invocations []map[string]any `json:"invocations"`
	}
	// The file is the session's UUID's, for the name as typed.
	sid, _ := sessionstore.SessionUUID(settings.DefaultUserID, "../escape")
	if err := json.Unmarshal([]byte(r.stdout), &f); err != nil || f.SessionID != sid.String() || len(f.Invocations) != 2 {
		t.Fatalf("%q %v", r.stdout, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape.yaml")); err == nil {
		t.Fatal("written outside the audit dir")
	}
	if _, err := os.Stat(filepath.Join(dir, sid.String()+".yaml")); err != nil {
		t.Fatalf("the dump is not named by the session's UUID: %v", err)
	}
}

// Two users each name a session "plan": each audited load goes to that
// user's session's dump, and `audit show plan` finds, for --user-id, that
// user's calls only (before, both were plan.yaml). A UUID is shown without
// the database.
func TestAuditShowResolvesTheName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"REMSTORE_DB": filepath.Join(dir, "a.db"), "DEBUG_AUDIT_DIR": dir, "DEBUG_AUDIT_SESSION": "1"}
	for _, u := range []string{"alice", "bob"} {
		if r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "plan", "--user-id", u); r.code != 0 {
			t.Fatal(r.stderr)
		}
		if r := run(t, env, "", "load", "--session-id", "plan", "--user-id", u, "--format", "pydantic-ai", "--prompt", u+"'s prompt"); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	for _, u := range []string{"alice", "bob"} {
		r := run(t, env, "", "audit", "show", "plan", "--user-id", u, "--dir", dir, "--json")
		var f struct {
			SessionID   string           `json:"session_id"`
			Invocations []map[string]any `json:"invocations"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &f); err != nil || len(f.Invocations) != 1 || f.Invocations[0]["prompt"] != u+"'s prompt" {
			t.Fatalf("%s's audit show plan: %d %q %q %v", u, r.code, r.stdout, r.stderr, err)
		}
		// By its UUID, without the database.
		r = run(t, map[string]string{"REMSTORE_DB": filepath.Join(dir, "none", "x.db")}, "", "audit", "show", strings.ToUpper(f.SessionID), "--dir", dir)
		if r.code != 0 || !strings.Contains(r.stdout, "1 invocation") || !strings.Contains(r.stdout, u+"'s prompt") {
			t.Fatalf("audit show %s: %d %q %q", f.SessionID, r.code, r.stdout, r.stderr)
		}
	}
	r := run(t, env, "", "audit", "show", "plan", "--user-id", "carol", "--dir", dir)
	if r.code != cli.ExitNotFound || !strings.Contains(r.stderr, `session "plan" of user "carol" (`) {
		t.Fatalf("carol's plan: %d %q", r.code, r.stderr)
	}
}

func TestExportImportMigrateCLI(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			src := map[string]string{"REMSTORE_DB": d.URL(t)}
			if r := run(t, src, "", "demo"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			if r := run(t, src, "", "export"); r.code != cli.ExitUsage {
				t.Fatalf("export without a scope: %d", r.code)
			}
			exp := run(t, src, "", "export", "--all")
			if exp.code != 0 || strings.Count(exp.stdout, "\n") != 10 {
				t.Fatalf("export: %d %q", exp.code, exp.stderr)
			}
			if r := run(t, src, "", "export", "--all", "--user-id", "someone-else"); r.stdout != "" {
				t.Fatalf("other tenant exported %q", r.stdout)
			}
			dst := map[string]string{"REMSTORE_DB": d.URL(t)}
			for i, want := range []string{"9 inserted, 0 already present", "0 inserted, 9 already present"} {
				if r := run(t, dst, exp.stdout, "import", "-"); r.code != 0 || !strings.Contains(r.stdout, want) {
					t.Fatalf("import %d: %q %s", i, r.stdout, r.stderr)
				}
			}
			if again := run(t, dst, "", "export", "--all"); again.stdout != exp.stdout {
				t.Fatal("export after import differs")
			}
			if r := run(t, dst, "not json\n", "import", "-"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "line 1") {
				t.Fatalf("bad import: %d %q", r.code, r.stderr)
			}
			// Another tenant's export is refused naming the line and the
			// way to take it (issue 26: import trusted the file's tenant).
			if r := run(t, dst, exp.stdout, "import", "-", "--user-id", "mallory"); r.code != cli.ExitUsage ||
				!strings.Contains(r.stderr, "line 1") || !strings.Contains(r.stderr, "--all-tenants") || !strings.Contains(r.stderr, "nothing imported") {
				t.Fatalf("import as another tenant: %d %q", r.code, r.stderr)
			}
			if r := run(t, dst, exp.stdout, "import", "-", "--all-tenants", "--atomic"); r.code != 0 || !strings.Contains(r.stdout, "0 inserted, 9 already present") {
				t.Fatalf("import --all-tenants --atomic: %d %q %q", r.code, r.stdout, r.stderr)
			}
			st := run(t, dst, "", "migrate", "status", "--json")
			if st.code != 0 || strings.Count(st.stdout, `"applied":true`) != len(migrations.All().Sorted()) {
				t.Fatalf("status: %q", st.stdout)
			}
			if r := run(t, dst, "", "migrate", "down"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			if r := run(t, dst, "", "migrate", "status"); !strings.Contains(r.stdout, "pending") {
				t.Fatalf("after down: %q", r.stdout)
			}
			if r := run(t, dst, "", "migrate", "up"); r.code != 0 || strings.Contains(r.stdout, "pending") {
				t.Fatalf("up: %q %s", r.stdout, r.stderr)
			}
			if r := run(t, dst, "", "migrate", "sideways"); r.code != cli.ExitUsage {
				t.Fatalf("bad action: %d", r.code)
			}
		})
	}
}

func TestSessionsCLI(t *testing.T) {
	t.Parallel()
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"REMSTORE_DB": d.URL(t), "REMSTORE_USER_ID": "alice"}
			long := strings.Repeat("word ", 100)
			in := `[{"role":"user","content":"q"},{"role":"assistant","content":"` + long + `","usage":{"input_tokens":7,"output_tokens":3}},{"role":"user","content":"q2"},{"role":"assistant","content":"a2"}]`
			if r := run(t, env, in, "store", "--session-id", "s1"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			steps := []struct {
				args []string
				code int
				want string
			}{
				{[]string{"sessions", "list", "--json"}, 0, `"total":1`},
				{[]string{"sessions", "update", "s1", "--agent", "planner", "--set", "model=gpt-4o", "--set", "n=3"}, 0, `"settings":{"model":"gpt-4o","n":3}`},
				{[]string{"sessions", "list", "--agent", "planner"}, 0, "1 of 1"},
				{[]string{"sessions", "usage", "s1"}, 0, `"total_tokens":10`},
				{[]string{"sessions", "fork", "s1", "--up-to", "2", "--new-session-id", "s2"}, 0, `"forked_from"`},
				{[]string{"sessions", "compact", "s1", "--keep-last", "2"}, 0, "Summary of 2 earlier messages"},
				{[]string{"sessions", "get", "s1", "--no-compress"}, 0, "Summary of 2"},
				{[]string{"sessions", "status", "s1", "cancelled", "--reason", "stop"}, 0, "cancelled"},
				{[]string{"sessions", "status", "s1", "active"}, 2, "invalid status transition"},
				{[]string{"sessions", "list", "--status", "active,error"}, 0, "1 of 1"},
				{[]string{"sessions", "expire", "--idle", "1ns", "--dry-run"}, 0, "would expire 1 sessions"},
				{[]string{"sessions", "delete", "s2", "--purge"}, 0, ""},
				{[]string{"sessions", "get", "s2"}, 1, "not found"},
				{[]string{"sessions", "get", "s1", "--user-id", "bob"}, 1, "not found"},
				{[]string{"sessions", "list", "--limit", "501"}, 2, "limit"},
			}
			for _, s := range steps {
				r := run(t, env, "", s.args...)
				if r.code != s.code || !strings.Contains(r.stdout+r.stderr, s.want) {
					t.Fatalf("%v: exit %d, %q %q; want exit %d with %q", s.args, r.code, r.stdout, r.stderr, s.code, s.want)
				}
			}
			if r := run(t, env, `[{"role":"user","content":"late"}]`, "store", "--session-id", "s1"); r.code != 2 || !strings.Contains(r.stderr, "not active") {
				t.Fatalf("store into a cancelled session: %d %q", r.code, r.stderr)
			}
		})
	}
}

// The README's first command on a machine with nothing configured: a clean
// HOME, no environment, a fresh working directory; the database lands in the
// user data directory.
func TestDemoCleanHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", "")
	var out, errb bytes.Buffer
	code := cli.RunWith(context.Background(), cli.Options{Getenv: func(string) (string, bool) { return "", false }, Dir: t.TempDir()},
		[]string{"demo"}, strings.NewReader(""), &out, &errb)
	if code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "remstore", "remstore.db")); err != nil {
		t.Fatalf("no database in the data directory: %v", err)
	}
	if !strings.Contains(out.String(), "equal to the stored text: true") {
		t.Fatalf("demo output:\n%s", out.String())
	}
}

// Commands that only read never migrate and never create a file or a table:
// on a missing SQLite file and on an empty PostgreSQL schema they say what to
// run (exit 3) and leave both as they were.
func TestReadOnlyCommandsTouchNothing(t *testing.T) {
	t.Parallel()
	readers := [][]string{
		{"load", "--session-id", "s"},
		{"load", "--session-id", "s", "--format", "pydantic-ai"},
		{"lookup", "session-6e3e7151-1111-4222-8333-944445555666-msg-1"},
		{"export", "--all"},
		{"sessions", "get", "s"},
		{"sessions", "list"},
		{"sessions", "usage", "s"},
		{"migrate", "status"},
	}
	path := filepath.Join(t.TempDir(), "never.db")
	pgURL := dbtest.NewPostgresURL(t)
	for _, db := range []string{path, pgURL} {
		for _, args := range readers {
			r := run(t, map[string]string{"REMSTORE_DB": db}, "", args...)
			isStatus := args[0] == "migrate"
			switch {
			case isStatus && db == pgURL:
				if r.code != 0 || !strings.Contains(r.stdout, "pending") {
					t.Errorf("%v on an empty schema: %d %q %q", args, r.code, r.stdout, r.stderr)
				}
			case r.code != cli.ExitUnavailable || !strings.Contains(r.stderr, "database not migrated: run remstore migrate up"):
				t.Errorf("%v on %s: exit %d %q", args, map[bool]string{true: "PostgreSQL", false: "SQLite"}[db == pgURL], r.code, r.stderr)
			}
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a read-only command created %s: %v", path, err)
	}
	raw := dbtest.OpenRaw(t, pgURL)
	var n int
	if err := raw.NewRaw("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()").Scan(context.Background(), &n); err != nil || n != 0 {
		t.Errorf("read-only commands created %d tables (%v)", n, err)
	}
	// A path the user typed whose folder is missing is an error, not a new folder.
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")
	if r := run(t, map[string]string{"REMSTORE_DB": missing}, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "s"); r.code != cli.ExitUnavailable || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("store into a missing folder: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Error("the missing folder was created")
	}
}

// The newcomer's-first-hour items (issue 17) that the README test does not
// already run: each failed before its fix.
func TestNewcomerItems(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "n.db"), "REMSTORE_USER_ID": "alice"}
	hist, err := os.ReadFile(fixtures.Path("readme", "chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, env, string(hist), "store", "--session-id", "chat-1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	// 7: --all-tenants alone is every session of every tenant; neither
	// flag names what is missing.
	if r := run(t, env, "", "export", "--all-tenants"); r.code != 0 || !strings.Contains(r.stdout, `"name":"chat-1"`) || !strings.Contains(r.stdout, `"tenant_id":"alice"`) {
		t.Errorf("export --all-tenants: %d %q", r.code, r.stderr)
	}
	if r := run(t, env, "", "export"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--all") || !strings.Contains(r.stderr, "--session-id") {
		t.Errorf("export: %d %q", r.code, r.stderr)
	}
	// 8: compress prints the keys the store gave, and they resolve.
	comp := run(t, env, string(hist), "compress", "--session-id", "chat-1")
	loaded := run(t, env, "", "load", "--session-id", "chat-1")
	ck, lk := keyIn(comp.stdout), keyIn(loaded.stdout)
	if ck == "" || ck != lk {
		t.Errorf("compress key %q, stored key %q", ck, lk)
	}
	if r := run(t, env, "", "lookup", ck); r.code != 0 || !strings.HasPrefix(r.stdout, "Here is a plan") || strings.HasSuffix(r.stdout, "\n") {
		t.Errorf("lookup of compress's key: %d %q", r.code, r.stderr)
	}
	// 9: a malformed key is bad input (2), an unknown session's usage not found (1).
	if r := run(t, env, "", "lookup", "REM LOOKUP"); r.code != cli.ExitUsage {
		t.Errorf("malformed key: exit %d %q", r.code, r.stderr)
	}
	if r := run(t, env, "", "sessions", "usage", "no-such-session"); r.code != cli.ExitNotFound {
		t.Errorf("usage of an unknown session: exit %d %q", r.code, r.stdout)
	}
	// 10: compacting nothing is a no-op (0); forking beyond the end is an error.
	if r := run(t, env, "", "sessions", "compact", "chat-1", "--keep-last", "50"); r.code != 0 || !strings.Contains(r.stdout, "nothing to compact") {
		t.Errorf("no-op compact: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "", "sessions", "fork", "chat-1", "--up-to", "40"); r.code != cli.ExitUsage || !strings.Contains(r.stderr, "--up-to: ") || strings.Contains(r.stderr, "up_to") {
		t.Errorf("fork --up-to 40 of 6: %d %q", r.code, r.stderr)
	}
	// 12: migrate status is a table whose columns line up.
	st := run(t, env, "", "migrate", "status")
	lines := strings.Split(strings.TrimSpace(st.stdout), "\n")
	col := strings.Index(lines[0], "STATE")
	for _, l := range lines[1:] {
		if len(l) <= col || (l[col:] != "applied" && l[col:] != "pending") || l[col-1] != ' ' {
			t.Errorf("migrate status misaligned:\n%s", st.stdout)
			break
		}
	}
}

func keyIn(s string) string {
	i := strings.Index(s, `"_entity_key":"`)
	if i < 0 {
		return ""
	}
	k := s[i+len(`"_entity_key":"`):]
	return k[:strings.IndexByte(k, '"')]
}

// The tenancy matrix over the CLI: alice's session, by its UUID, does not
// exist for bob on any command, and nothing of it shows.
func TestTenancyCLI(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "t.db")
	alice := map[string]string{"REMSTORE_DB": db, "REMSTORE_USER_ID": "alice"}
	bob := map[string]string{"REMSTORE_DB": db, "REMSTORE_USER_ID": "bob"}
	id := "6e3e7151-1111-4222-8333-944445555666"
	hist, _ := os.ReadFile(fixtures.Path("readme", "chat.json"))
	if r := run(t, alice, string(hist), "store", "--session-id", id); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, alice, "", "sessions", "update", id, "--agent", "alice-secret-agent"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	key := keyIn(run(t, alice, "", "load", "--session-id", id).stdout)
	for _, args := range [][]string{
		{"store", "--session-id", id},
		{"sessions", "get", id},
		{"sessions", "status", id, "cancelled", "--reason", "hijack"},
		{"sessions", "update", id, "--agent", "bob"},
		{"sessions", "fork", id},
		{"sessions", "compact", id, "--keep-last", "1"},
		{"sessions", "usage", id},
		{"sessions", "delete", id},
		{"lookup", key},
		{"lookup", "--session-id", id, "--index", "1"},
		{"export", "--session-id", id},
	} {
		r := run(t, bob, `[{"role":"user","content":"intrude"}]`, args...)
		if r.code != cli.ExitNotFound || strings.Contains(r.stderr+r.stdout, "alice-secret-agent") || strings.Contains(r.stdout, "Lisbon") {
			t.Errorf("bob %v: exit %d %q %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := run(t, bob, "", "load", "--session-id", id); r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("bob loads alice's session: %d %q", r.code, r.stdout)
	}
	r := run(t, alice, "", "sessions", "get", id, "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"status":"active"`) || !strings.Contains(r.stdout, "alice-secret-agent") || strings.Contains(r.stdout, "intrude") {
		t.Errorf("alice's session changed: %q", r.stdout)
	}
}

// Distributing refuses what cannot be distributed before it opens, migrates
// or creates anything; on PostgreSQL without Citus it says so after
// migrating (a Citus coordinator is found only by asking it).
func TestCitusCommandsRefuse(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "never.db")
	for _, args := range [][]string{
		{"citus", "distribute"},
		{"citus", "distribute", "--shard-count", "-1"},
		{"migrate", "up", "--distributed"},
		{"migrate", "down", "--distributed"},
	} {
		r := run(t, map[string]string{"REMSTORE_DB": path}, "", args...)
		if r.code != cli.ExitUsage || r.stderr == "" {
			t.Errorf("%v on SQLite: exit %d %q, want %d with a reason", args, r.code, r.stderr, cli.ExitUsage)
		}
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a refused distribute created %s: %v", path, err)
	}
	pg := map[string]string{"REMSTORE_DB": dbtest.NewPostgresURL(t)}
	if r := run(t, pg, "", "citus", "distribute"); r.code == 0 || !strings.Contains(r.stderr, "no citus extension") || strings.Contains(r.stdout, "already distributed") {
		t.Errorf("distribute without Citus: exit %d %q", r.code, r.stderr)
	}
	if r := run(t, pg, "", "citus", "status"); r.code != 0 || !strings.Contains(r.stdout, "not installed") {
		t.Errorf("status without Citus: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// store --format pydantic-ai, load --format pydantic-ai, and removing
// messages, on every database: what pydantic-ai wrote comes back as it was
// (T large), bad input exits 2 naming message and part with nothing stored,
// and pop / clear leave the rows in place, soft-deleted.
func TestPydanticAIAndRemovalCLI(t *testing.T) {
	t.Parallel()
	in, err := os.ReadFile("../../fixtures/pydantic-ai/1-tools.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"REMSTORE_DB": d.URL(t), "REMSTORE_TRUNCATE_LENGTH": "100000"}
			r := run(t, env, string(in), "store", "--session-id", "agent-1", "--user-id", "alice", "--format", "pydantic-ai")
			if r.code != 0 || !strings.Contains(r.stdout, `"stored":`) {
				t.Fatalf("store: %d %s %s", r.code, r.stdout, r.stderr)
			}
			r = run(t, env, "", "load", "--session-id", "agent-1", "--user-id", "alice", "--format", "pydantic-ai")
			if r.code != 0 || !dbtest.JSONEqual(t, in, []byte(r.stdout)) {
				t.Fatalf("load: %d %s\nwant %s", r.code, r.stdout, in)
			}
			bad := `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"fine"}]},{"kind":"response","parts":[{"part_kind":"mind-reading"}]}]`
			r = run(t, env, bad, "store", "--session-id", "agent-1", "--user-id", "alice", "--format", "pydantic-ai")
			if r.code != 2 || !strings.Contains(r.stderr, `message 1: field "parts[0]": unknown response part kind "mind-reading"`) {
				t.Fatalf("bad part: %d %s", r.code, r.stderr)
			}
			r = run(t, env, "[]", "store", "--session-id", "agent-1", "--user-id", "alice", "--format", "openai")
			if r.code != 2 || !strings.Contains(r.stderr, "--format") {
				t.Fatalf("bad format: %d %s", r.code, r.stderr)
			}
			r = run(t, env, "", "sessions", "pop", "agent-1", "--user-id", "alice")
			var popped map[string]any
			if r.code != 0 || json.Unmarshal([]byte(r.stdout), &popped) != nil || popped["role"] != "assistant" || popped["pydantic_ai"] == nil {
				t.Fatalf("pop: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if r = run(t, env, "", "sessions", "pop", "agent-1", "--user-id", "bob"); r.code != 1 {
				t.Fatalf("bob's pop: %d %s", r.code, r.stderr)
			}
			r = run(t, env, "", "sessions", "clear", "agent-1", "--user-id", "alice")
			if r.code != 0 || !strings.Contains(r.stdout, `"removed":`) {
				t.Fatalf("clear: %d %s %s", r.code, r.stdout, r.stderr)
			}
			if r = run(t, env, "", "sessions", "pop", "agent-1", "--user-id", "alice"); r.code != 0 || strings.TrimSpace(r.stdout) != "null" {
				t.Fatalf("pop after clear: %d %q", r.code, r.stdout)
			}
			if r = run(t, env, "", "load", "--session-id", "agent-1", "--user-id", "alice"); strings.TrimSpace(r.stdout) != "[]" {
				t.Fatalf("load after clear: %s", r.stdout)
			}
		})
	}
}

// Issue 29: what the store would lose is refused before a database is
// opened; what a conversion cannot map is said on stderr, or with --strict
// is exit 2 with nothing on stdout.
func TestRefusalsAndUnmappedWarnings(t *testing.T) {
	t.Parallel()
	// No database yet, and none is created: the input decides.
	dbPath := filepath.Join(t.TempDir(), "never.db")
	env := map[string]string{"REMSTORE_DB": dbPath}
	for _, c := range []struct{ in, want string }{
		{`[{"role":"bot","content":"hi"}]`, `message 0: field "role": "bot" is not a role; the roles are user, assistant, tool, system, function, model`},
		{`[{"role":"USER","content":"hi"}]`, `did you mean "user"?`},
		{`[{"role":"user","contnet":"hi"}]`, `message 0: field "contnet": not a message key; the keys are role, content`},
		{`[{"role":"user","content":"hi","timestamp":"yesterday"}]`, `field "timestamp": "yesterday" is not an ISO-8601 time`},
	} {
		r := run(t, env, c.in, "store", "--session-id", "s", "--user-id", "alice")
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("store %s: exit %d %q; want 2 with %q", c.in, r.code, r.stderr, c.want)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Fatalf("a refused store created the database: %v", err)
	}

	r := run(t, nil, `[{"role":"user","content":"hi"},{"role":"critic","content":"meh"}]`, "convert")
	if r.code != 0 || !strings.Contains(r.stderr, `remstore: warning: 1 message left out of the pydantic-ai history: message 1 (role "critic")`) {
		t.Fatalf("convert: %d %q", r.code, r.stderr)
	}
	r = run(t, nil, `[{"role":"user","content":"hi"},{"role":"critic","content":"meh"}]`, "convert", "--strict")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `message 1: field "role": "critic" has no pydantic-ai form`) {
		t.Fatalf("convert --strict: %d %q %q", r.code, r.stdout, r.stderr)
	}

	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			url := d.URL(t)
			env := map[string]string{"REMSTORE_DB": url, "REMSTORE_USER_ID": "alice"}
			r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "s")
			if r.code != 0 {
				t.Fatalf("store: %d %s", r.code, r.stderr)
			}
			var res struct {
				SessionID string `json:"session_id"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
				t.Fatalf("store answer %q: %v", r.stdout, err)
			}
			db := dbtest.OpenRaw(t, url)
			at := time.Now().Add(time.Hour)
			if _, err := dbtest.PeerStore(context.Background(), db, uuid.MustParse(res.SessionID), "alice", []dbtest.PeerMessage{{Role: "bot", Content: "beep"}},
				func(int) time.Time { return at }); err != nil {
				t.Fatal(err)
			}
			r = run(t, env, "", "load", "--session-id", "s", "--format", "pydantic-ai")
			if r.code != 0 || strings.Contains(r.stdout, "beep") || !strings.Contains(r.stderr, `1 message left out of the pydantic-ai history: message 1 (role "bot"); their roles have no pydantic-ai form (--strict makes this an error)`) {
				t.Fatalf("load: %d %q %q", r.code, r.stdout, r.stderr)
			}
			r = run(t, env, "", "load", "--session-id", "s", "--format", "pydantic-ai", "--strict")
			if r.code != 2 || r.stdout != "" {
				t.Fatalf("load --strict: %d %q %q", r.code, r.stdout, r.stderr)
			}
			// The dicts load shows the row unchanged (SPEC §1).
			if r = run(t, env, "", "load", "--session-id", "s"); r.code != 0 || !strings.Contains(r.stdout, `"role":"bot"`) || r.stderr != "" {
				t.Fatalf("load dicts: %d %q %q", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// Issue 29, the CLI's words: each case failed before (typos in grouped
// commands exited 0 with help, cobra's suggestion came out as
// "; ; Did you mean this?; \tload; ", fields were named as the library
// names them, strconv spoke, a bad port was "storage unavailable", a bad key
// on a machine with no database exit 3). None of them may touch a database:
// REMSTORE_DB points into a folder that does not exist.
func TestCLIWords(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "missing", "x.db")}
	for _, c := range []struct {
		args []string
		code int
		want string // the whole stderr
	}{
		{[]string{"sessions", "lst"}, 2, `remstore: unknown command "lst" for "remstore sessions"; did you mean "list"?`},
		{[]string{"audit", "shw"}, 2, `remstore: unknown command "shw" for "remstore audit"; did you mean "show"?`},
		{[]string{"citus", "stat"}, 2, `remstore: unknown command "stat" for "remstore citus"; did you mean "status"?`},
		{[]string{"lod"}, 2, `remstore: unknown command "lod" for "remstore"; did you mean "load"?`},
		{[]string{"sess"}, 2, `remstore: unknown command "sess" for "remstore"; did you mean "sessions"?`},
		{[]string{"xyzzy"}, 2, `remstore: unknown command "xyzzy" for "remstore"; "remstore --help" lists the commands`},
		{[]string{"completion", "bsh"}, 2, `remstore: unknown command "bsh" for "remstore completion"; did you mean "bash"?`},
		{[]string{"load", "--sesion-id", "x"}, 2, `remstore: unknown flag --sesion-id for "remstore load"; did you mean --session-id?`},
		{[]string{"load", "--session-id", "x", "--truncate-length", "abc"}, 2, `remstore: --truncate-length: "abc" is not an integer`},
		{[]string{"load", "--session-id", "x", "--json=maybe"}, 2, `remstore: --json: "maybe" is not true or false`},
		{[]string{"sessions", "expire", "--idle", "5"}, 2, `remstore: --idle: "5" is not a duration such as 30s, 5m or 1h`},
		{[]string{"sessions", "status", "x"}, 2, `remstore: remstore sessions status: accepts 2 arg(s), received 1; usage: remstore sessions status SESSION active|completed|cancelled|error [flags]`},
		{[]string{"serve", "--addr", "127.0.0.1:99999", "--insecure-no-auth"}, 2, `remstore: --addr "127.0.0.1:99999": port "99999" is not a number from 0 to 65535`},
		{[]string{"lookup", "REM LOOKUP nonsense"}, 2, `remstore: field "key": bad REM LOOKUP key: must start with "session-"`},
	} {
		r := run(t, env, "", c.args...)
		if r.code != c.code || strings.TrimSpace(r.stderr) != c.want || r.stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %d bytes; want exit %d, %q", c.args, r.code, r.stderr, len(r.stdout), c.code, c.want)
		}
	}
	// A group called bare still prints its help, exit 0.
	for _, g := range []string{"sessions", "audit", "citus"} {
		if r := run(t, env, "", g); r.code != 0 || !strings.Contains(r.stdout, "Available Commands:") {
			t.Errorf("%s alone: %d %q", g, r.code, r.stderr)
		}
	}
}

// Issue 29: a library field is named as the flag typed; a load that finds
// nothing says why on stderr while stdout stays []; not found names the
// session as typed and the user it was looked up as.
func TestCLIWordsWithADatabase(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "w.db"), "REMSTORE_USER_ID": "alice"}
	if r := run(t, env, `[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]`, "store", "--session-id", "chat-1"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "empty"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, env, "", "sessions", "clear", "empty"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string
		want string
	}{
		{[]string{"sessions", "compact", "chat-1", "--keep-last", "-1"}, 2, "", `remstore: --keep-last: must be >= 0`},
		{[]string{"sessions", "fork", "chat-1", "--up-to", "-1"}, 2, "", `remstore: --up-to: must be >= 0`},
		{[]string{"sessions", "fork", "chat-1", "--new-session-id", "chat-1"}, 2, "", `remstore: --new-session-id: session chat-1 already exists`},
		{[]string{"load", "--session-id", "chat-1", "--user-id", "bob"}, 0, "[]", `remstore: note: no session "chat-1" for user "bob"; the output is empty (check --session-id and --user-id)`},
		{[]string{"load", "--session-id", "chat-2", "--format", "pydantic-ai"}, 0, "[]", `remstore: note: no session "chat-2" for user "alice"; the output is empty (check --session-id and --user-id)`},
		{[]string{"load", "--session-id", "empty"}, 0, "[]", `remstore: note: session "empty" of user "alice" has no messages`},
		{[]string{"sessions", "get", "chat-1", "--user-id", "bob"}, 1, "", `session "chat-1" (`},
		{[]string{"sessions", "get", "chat-1", "--user-id", "bob"}, 1, "", `not found for user "bob"`},
		{[]string{"lookup", "--session-id", "chat-1", "--index", "1", "--user-id", "bob"}, 1, "", `(session "chat-1" is `},
	} {
		r := run(t, env, "", c.args...)
		got := strings.TrimSpace(r.stderr)
		if r.code != c.code || strings.TrimSpace(r.stdout) != c.out || !strings.Contains(got, c.want) {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit %d, %q", c.args, r.code, got, r.stdout, c.code, c.want)
		}
	}
	// Store needs no note: a load of the session that has messages is quiet.
	if r := run(t, env, "", "load", "--session-id", "chat-1"); r.code != 0 || r.stderr != "" {
		t.Errorf("load chat-1: %d %q", r.code, r.stderr)
	}
}

// remstore search on every database: words, tools, bob sees nothing of
// alice's, the index made and dropped on PostgreSQL, bad input exit 2.
func TestSearchCLI(t *testing.T) {
	t.Parallel()
	hist, err := os.ReadFile(fixtures.Path("readme", "chat.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"REMSTORE_DB": d.URL(t), "REMSTORE_USER_ID": "alice"}
			if r := run(t, env, string(hist), "store", "--session-id", "chat-1"); r.code != 0 {
				t.Fatal(r.stderr)
			}
			// Hand-counted in fixtures/readme/chat.json: "Lisbon" is in the
			// question, the answer and the weather tool's return.
			r := run(t, env, "", "search", "LISBON")
			if r.code != 0 || strings.Count(r.stdout, "chat-1") != 3 || !strings.HasPrefix(r.stdout, "SESSION") {
				t.Errorf("search LISBON: %d %q %q", r.code, r.stdout, r.stderr)
			}
			var hits []struct {
				SessionName string `json:"session_name"`
				Role        string `json:"role"`
				ToolName    string `json:"tool_name"`
			}
			r = run(t, env, "", "search", "--in", "tool", "WEATHER", "--json")
			if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) != 1 || hits[0].ToolName != "get_weather" || hits[0].Role != "tool" {
				t.Errorf("search --in tool: %v %q", err, r.stdout)
			}
			if r := run(t, env, "", "search", "lisbon", "--user-id", "bob"); r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, `nothing found for user "bob"`) {
				t.Errorf("bob: %d %q %q", r.code, r.stdout, r.stderr)
			}
			if r := run(t, env, "", "search", "x", "--in", "everything"); r.code != 2 || !strings.Contains(r.stderr, `--in: "everything" is not content, tool, key, agent`) {
				t.Errorf("--in everything: %d %q", r.code, r.stderr)
			}
			if r := run(t, env, "", "search", "--index"); r.code != 0 || !strings.Contains(r.stdout, "search index: up to date") {
				t.Errorf("--index: %d %q %q", r.code, r.stdout, r.stderr)
			}
			if r := run(t, env, "", "search", "--index", "lisbon"); r.code != 2 || !strings.Contains(r.stderr, "--index takes no QUERY") {
				t.Errorf("--index lisbon: %d %q", r.code, r.stderr)
			}
		})
	}
}

// A turn from the shell: load --print-last names the last message, a store
// naming it is stored and answers the next one's guard, a store naming an
// older one exits 2 and stores nothing; load --last keeps tool pairs whole.
func TestGuardedStoreFromTheShell(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "g.db"), "REMSTORE_USER_ID": "alice"}
	if r := run(t, env, "", "migrate", "up"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := run(t, env, "", "load", "--session-id", "g", "--print-last")
	if r.code != 0 || !strings.Contains(r.stderr, "remstore: last message empty\n") {
		t.Fatalf("load: %d %q", r.code, r.stderr)
	}
	turn := `[{"role":"user","content":"q"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},{"role":"tool","content":"r","tool_call_id":"c1"}]`
	r = run(t, env, turn, "store", "--session-id", "g", "--expect-last", "empty")
	var res struct {
		Stored int    `json:"stored"`
		Last   string `json:"last"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != 0 || err != nil || res.Stored != 3 || res.Last == "" {
		t.Fatalf("guarded store: %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, `[{"role":"user","content":"x"}]`, "store", "--session-id", "g", "--expect-last", "empty"); r.code != 2 ||
		!strings.Contains(r.stderr, "the session's last is "+res.Last) {
		t.Fatalf("stale guard: %d %q", r.code, r.stderr)
	}
	r = run(t, env, "", "load", "--session-id", "g", "--print-last", "--last", "1")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" || !strings.Contains(r.stderr, "last message "+res.Last) {
		t.Fatalf("last 1 (a result without its call): %d %s %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, env, "", "load", "--session-id", "g", "--last", "2"); r.code != 0 || !strings.Contains(r.stdout, `"c1"`) || strings.Contains(r.stdout, `"q"`) {
		t.Fatalf("last 2: %d %s", r.code, r.stdout)
	}
	if r := run(t, env, `[{"role":"user","content":"x"}]`, "store", "--session-id", "g", "--expect-last", res.Last); r.code != 0 {
		t.Fatalf("fresh guard: %d %s", r.code, r.stderr)
	}
}

// Storing with storage off says so (issue 43): stored 0, the note on
// stderr; the messages are not stored (SPEC §7).
func TestStoreWithStorageOffSaysSo(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "off.db"), "REMSTORE_USER_ID": "alice", "POSTGRES_ENABLED": "false"}
	r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "off")
	if r.code != 0 || !strings.Contains(r.stdout, `"stored":0`) || !strings.Contains(r.stderr, "storage is off") {
		t.Fatalf("store with storage off: %d %s %q", r.code, r.stdout, r.stderr)
	}
}

// With storage off, the commands that find nothing say why on stderr (issue
// 54: load printed [] with no word, lookup blamed the user id, pop and clear
// printed null and 0): storage is off, and where it was switched off. Exit
// codes are as before: load, pop and clear 0, lookup 1 (nothing found),
// what refuses 3.
func TestStorageOffIsSaid(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "off.db")
	on := map[string]string{"REMSTORE_DB": dbPath, "REMSTORE_USER_ID": "alice", "REMSTORE_TRUNCATE_LENGTH": "5"}
	st := run(t, on, `[{"role":"user","content":"hi"},{"role":"assistant","content":"0123456789abcdef"}]`, "store", "--session-id", "chat-1")
	var stored struct{ Keys []string }
	if err := json.Unmarshal([]byte(st.stdout), &stored); st.code != 0 || err != nil || len(stored.Keys) != 2 {
		t.Fatalf("store: %d %q %q", st.code, st.stdout, st.stderr)
	}
	off := map[string]string{"POSTGRES_ENABLED": "false"}
	for k, v := range on {
		off[k] = v
	}
	const said = "storage is off (POSTGRES_ENABLED=false, from env)"
	for _, c := range []struct {
		args []string
		code int
		out  string // the whole stdout, trimmed
		want string // in stderr
	}{
		{[]string{"load", "--session-id", "chat-1"}, 0, "[]", "remstore: note: " + said + "; the output is empty"},
		{[]string{"load", "--session-id", "chat-1", "--format", "pydantic-ai"}, 0, "[]", "remstore: note: " + said + "; the output is empty"},
		{[]string{"lookup", stored.Keys[1]}, 1, "", "remstore: lookup " + stored.Keys[1] + ": nothing found, " + said},
		{[]string{"lookup", "--session-id", "chat-1", "--index", "1"}, 1, "", `remstore: lookup index 1 of session "chat-1": nothing found, ` + said},
		{[]string{"sessions", "list"}, 3, "", "remstore: " + said},
		{[]string{"sessions", "get", "chat-1"}, 3, "", "remstore: " + said},
		{[]string{"sessions", "pop", "chat-1"}, 0, "null", "remstore: note: " + said + ": nothing was read or changed"},
		{[]string{"sessions", "clear", "chat-1"}, 0, `{"removed":0}`, "remstore: note: " + said + ": nothing was read or changed"},
		{[]string{"store", "--session-id", "chat-1"}, 0, `{"session_id":`, "remstore: " + said + ": nothing was stored"},
	} {
		in := ""
		if c.args[0] == "store" {
			in = `[{"role":"user","content":"more"}]`
		}
		r := run(t, off, in, c.args...)
		if r.code != c.code || !strings.HasPrefix(strings.TrimSpace(r.stdout), c.out) || !strings.Contains(r.stderr, c.want) ||
			strings.Contains(r.stderr, "user-id") || strings.Contains(r.stderr, `for user "alice"`) {
			t.Errorf("%v with storage off: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q and no word of the user id",
				c.args, r.code, r.stdout, r.stderr, c.code, c.out, c.want)
		}
	}
	// Nothing was changed: with storage on, the session is as stored.
	if r := run(t, on, "", "load", "--session-id", "chat-1", "--no-compress"); r.code != 0 || !strings.Contains(r.stdout, "0123456789abcdef") || strings.Count(r.stdout, `"role"`) != 2 {
		t.Errorf("load with storage on after: %d %q %q", r.code, r.stdout, r.stderr)
	}
	// Switched off in a .env: the note names the file.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("POSTGRES_ENABLED=FALSE\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	getenv := func(k string) (string, bool) { v, ok := on[k]; return v, ok }
	code := cli.RunWith(context.Background(), cli.Options{Getenv: getenv, Dir: dir}, []string{"load", "--session-id", "chat-1"}, strings.NewReader(""), &out, &errb)
	if want := "storage is off (POSTGRES_ENABLED=false, from .env (" + filepath.Join(dir, ".env") + "))"; code != 0 || !strings.Contains(errb.String(), want) {
		t.Errorf("load with storage off in .env: %d %q; want %q", code, errb.String(), want)
	}
}

// A POSTGRES_ENABLED that is neither true nor false stops every command
// with exit 2 naming the variable and the two values (issue 54: "flase"
// warned, turned storage off and exited 0); true and false in any case
// still run. Nothing is stored or created before the refusal.
func TestPostgresEnabledTypoRefused(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "typo.db")
	for _, c := range []struct {
		value string
		args  []string
		in    string
	}{
		{"flase", []string{"store", "--session-id", "s"}, `[{"role":"user","content":"hi"}]`},
		{"flase", []string{"load", "--session-id", "s"}, ""},
		{"ture", []string{"lookup", "session-6f1c3b7e-8a53-4b1e-9a55-3f3d2c1b0a99-msg-0"}, ""},
		{"1", []string{"sessions", "list"}, ""},
		{"yes", []string{"env"}, ""},
		{"", []string{"load", "--session-id", "s"}, ""},
	} {
		env := map[string]string{"REMSTORE_DB": dbPath, "REMSTORE_USER_ID": "alice", "POSTGRES_ENABLED": c.value}
		r := run(t, env, c.in, c.args...)
		want := `remstore: POSTGRES_ENABLED (from env): "` + c.value + `" is neither true nor false: set true to store, false to turn storage off`
		if r.code != cli.ExitUsage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 || r.stdout != "" {
			t.Errorf("POSTGRES_ENABLED=%q %v: exit %d, stdout %q, stderr %q; want exit 2 with %q", c.value, c.args, r.code, r.stdout, r.stderr, want)
		}
	}
	if _, err := os.Stat(dbPath); !os.IsNotExist(err) {
		t.Fatalf("a refused command created the database: %v", err)
	}
	for _, v := range []string{"TRUE", "False"} {
		env := map[string]string{"REMSTORE_DB": dbPath, "REMSTORE_USER_ID": "alice", "POSTGRES_ENABLED": v}
		if r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "s"); r.code != 0 {
			t.Errorf("POSTGRES_ENABLED=%s: store exit %d %q", v, r.code, r.stderr)
		}
	}
}

// serve on a port in use is exit 2 naming --addr and how to pick a free one
// (issue 43: exit 3, read as "storage unavailable", without a hint).
func TestServeOnABusyPort(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "busy.db"), "REMSTORE_API_KEYS": "busy-key-0123456789abcdef"}
	if r := run(t, env, "", "migrate", "up"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := run(t, env, "", "serve", "--addr", l.Addr().String())
	if r.code != 2 || !strings.Contains(r.stderr, "--addr "+l.Addr().String()) || !strings.Contains(r.stderr, "in use") || !strings.Contains(r.stderr, "127.0.0.1:0") {
		t.Fatalf("serve on a busy port: exit %d, %q", r.code, r.stderr)
	}
}

// No fixed port (issue 43): REMSTORE_ADDR from a .env is the listen address
// (it was ignored without a word), port 0 picks a free one, --url-file tells
// a script where, and `remstore health` finds the server by that URL.
func TestServeAnyPortURLFileAndHealth(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("REMSTORE_ADDR=127.0.0.1:0\nREMSTORE_ADRR=typo\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	urlFile := filepath.Join(dir, "remstore.url")
	env := map[string]string{"REMSTORE_DB": filepath.Join(dir, "port.db"), "REMSTORE_API_KEYS": "port-key-0123456789abcdef"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctx, cancel := context.WithCancel(context.Background())
	var errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cli.RunWith(ctx, cli.Options{Getenv: getenv, Dir: dir}, []string{"serve", "--url-file", urlFile}, strings.NewReader(""), io.Discard, &errb)
	}()
	var url string
	for i := 0; i < 200 && url == ""; i++ {
		b, _ := os.ReadFile(urlFile)
		url = strings.TrimSpace(string(b))
		time.Sleep(25 * time.Millisecond)
	}
	if url == "" || strings.HasSuffix(url, ":8088") || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("url file: %q; stderr %s", url, errb.String())
	}
	if !strings.Contains(errb.String(), "listening on "+url) {
		t.Errorf("stderr does not say where it listens: %s", errb.String())
	}
	if !strings.Contains(errb.String(), `REMSTORE_ADRR, which remstore does not read; did you mean \"REMSTORE_ADDR\"?`) {
		t.Errorf("an unknown REMSTORE_ key in .env is not warned about: %s", errb.String())
	}
	r := run(t, map[string]string{"REMSTORE_URL": url}, "", "health")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "ok "+url+" ") {
		t.Errorf("health via REMSTORE_URL: %d %q %q", r.code, r.stdout, r.stderr)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exit %d: %s", code, errb.String())
	}
	if _, err := os.Stat(urlFile); !os.IsNotExist(err) {
		t.Errorf("the url file outlives the server: %v", err)
	}
	// Nothing listens there now: exit 3, naming the URL and where it came from.
	r = run(t, map[string]string{"REMSTORE_URL": url}, "", "health", "--timeout", "2s")
	if r.code != 3 || !strings.Contains(r.stderr, url) || !strings.Contains(r.stderr, "REMSTORE_URL (from env)") {
		t.Errorf("health of a stopped server: %d %q", r.code, r.stderr)
	}
	if r := run(t, nil, "", "health", "--url", "localhost:8088"); r.code != 2 || !strings.Contains(r.stderr, "--url") {
		t.Errorf("health with a URL without scheme: %d %q", r.code, r.stderr)
	}
}

// A command acting for no named user says which tenant it used (issue 43:
// a store went to "anonymous" in silence and the same person's later load
// with --user-id found nothing).
func TestDefaultUserIsSaid(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "anon.db")
	r := run(t, map[string]string{"REMSTORE_DB": db}, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "s")
	if r.code != 0 || !strings.Contains(r.stderr, `acting as user "anonymous" (no --user-id or REMSTORE_USER_ID)`) {
		t.Fatalf("store without a user: %d %q", r.code, r.stderr)
	}
	r = run(t, map[string]string{"REMSTORE_DB": db, "REMSTORE_USER_ID": "alice"}, "", "load", "--session-id", "s")
	if r.code != 0 || strings.Contains(r.stderr, "acting as") {
		t.Fatalf("load as a named user: %d %q", r.code, r.stderr)
	}
}

// The unclear words a stranger met (issue 43), each now naming the mistake.
func TestUnclearWords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "words.db")
	env := map[string]string{"REMSTORE_DB": db, "REMSTORE_USER_ID": "alice"}
	st := run(t, env, `[{"role":"user","content":"mine"},{"role":"assistant","content":"an answer"}]`, "store", "--session-id", "s1")
	if st.code != 0 {
		t.Fatal(st.stderr)
	}
	var stored struct{ Keys []string }
	if err := json.Unmarshal([]byte(st.stdout), &stored); err != nil || len(stored.Keys) != 2 {
		t.Fatalf("store answer %q: %v", st.stdout, err)
	}
	for _, c := range []struct {
		name    string
		args    []string
		code    int
		want    string
		notWant string
	}{
		{"a flag the typed name begins", []string{"load", "--user", "alice", "--session-id", "s1"}, 2, `unknown flag --user for "remstore load"; did you mean --user-id?`, ""},
		{"a command typo before a flag", []string{"lod", "--session-id", "s1"}, 2, `unknown command "lod" for "remstore"; did you mean "load"?`, "unknown flag"},
		{"lookup with nothing to look up", []string{"lookup"}, 2, "nothing to look up: give a KEY", "not both"},
		{"lookup with a key and a session", []string{"lookup", stored.Keys[1], "--session-id", "s1"}, 2, "not both", ""},
		{"--db naming a directory", []string{"load", "--db", dir, "--session-id", "s1"}, 2, dir + " is a directory: give the path of a SQLite file", "(14)"},
		{"a lookup of one's own user message", []string{"lookup", stored.Keys[0]}, 1, "the key names a user message", "--user-id"},
		{"a lookup of another user's answer", []string{"lookup", "--user-id", "bob", stored.Keys[1]}, 1, `for user "bob" (what another --user-id stored is not visible`, ""},
	} {
		r := run(t, env, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || c.notWant != "" && strings.Contains(r.stderr, c.notWant) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d with %q", c.name, r.code, r.stderr, c.code, c.want)
		}
	}
	r := run(t, env, "", "sessions", "list")
	if lines := strings.Split(r.stdout, "\n"); r.code != 0 || len(lines) < 3 || !strings.HasPrefix(lines[0], "ID ") ||
		!strings.Contains(lines[0], "STATUS") || !strings.Contains(lines[0], "NAME") || !strings.HasSuffix(lines[1], "s1") {
		t.Errorf("sessions list has no header row: %q", r.stdout)
	}
}

// The per-user limits come from the settings every surface reads.
func TestLimitsFromSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "limits.db"), "REMSTORE_USER_ID": "alice", "REMSTORE_MAX_SESSIONS": "1"}
	if r := run(t, env, `[{"role":"user","content":"a"}]`, "store", "--session-id", "one"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := run(t, env, `[{"role":"user","content":"b"}]`, "store", "--session-id", "two")
	if r.code != 2 || !strings.Contains(r.stderr, "the user owns 1 sessions, the server's limit") {
		t.Fatalf("a second session past REMSTORE_MAX_SESSIONS=1: %d %q", r.code, r.stderr)
	}
	// Every command that makes sessions reads the limit: a fork, and an
	// import of another database's two sessions (they ignored it).
	if r := run(t, env, "", "sessions", "fork", "one"); r.code != 2 || !strings.Contains(r.stderr, "the user owns 1 sessions, the server's limit") {
		t.Fatalf("a fork past REMSTORE_MAX_SESSIONS=1: %d %q", r.code, r.stderr)
	}
	other := map[string]string{"REMSTORE_DB": filepath.Join(t.TempDir(), "other.db"), "REMSTORE_USER_ID": "alice"}
	for _, key := range []string{"three", "four"} {
		if r := run(t, other, `[{"role":"user","content":"c"}]`, "store", "--session-id", key); r.code != 0 {
			t.Fatal(r.stderr)
		}
	}
	exp := run(t, other, "", "export", "--all")
	if exp.code != 0 {
		t.Fatal(exp.stderr)
	}
	if r := run(t, env, exp.stdout, "import", "-", "--atomic"); r.code != 2 || !strings.Contains(r.stderr, "the user owns 1 sessions") {
		t.Fatalf("an import past REMSTORE_MAX_SESSIONS=1: %d %q %q", r.code, r.stdout, r.stderr)
	}
	env["REMSTORE_MAX_SESSIONS"] = "3"
	if r := run(t, env, exp.stdout, "import", "-"); r.code != 0 {
		t.Fatalf("an import with room: %d %q", r.code, r.stderr)
	}
	env["REMSTORE_MAX_SESSION_MESSAGES"] = "lots"
	if r := run(t, env, "", "load", "--session-id", "one"); r.code != 2 || !strings.Contains(r.stderr, "REMSTORE_MAX_SESSION_MESSAGES (from env): must be a whole number") {
		t.Fatalf("a limit that is not a number: %d %q", r.code, r.stderr)
	}
}

// Flags whose values make no sense are refused naming the flag, in words a
// user knows: --batch-size 0 was taken, and --updated-before tomorrow was
// answered with Go's layout string.
func TestFlagValuesRefusedInPlainWords(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "f.db")
	if r := run(t, map[string]string{"REMSTORE_DB": db}, "", "migrate", "up"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args      []string
		code      int
		want, not string
	}{
		{[]string{"import", in, "--batch-size", "0"}, 2, "--batch-size must be at least 1", ""},
		{[]string{"sessions", "list", "--updated-before", "tomorrow"}, 2, "like 2026-01-15T10:30:00Z", "2006-01-02"},
		{[]string{"sessions", "list", "--created-after", "2026-13-01"}, 2, "--created-after", "2006-01-02"},
		{[]string{"sessions", "list", "--updated-before", "2026-01-15"}, 0, "", ""},
		{[]string{"sessions", "list", "--updated-before", "2026-01-15T10:30:00+02:00"}, 0, "", ""},
	} {
		r := run(t, map[string]string{"REMSTORE_DB": db}, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || c.not != "" && strings.Contains(r.stderr, c.not) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d with %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
}

package httpapi

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/repository"
)

// Audit per tenant (SPEC §6, amended): a dump is named by the session's
// UUID, never by the name a caller spelled. alice and bob each name a
// session "plan"; each one's audited load and recorded call land in a file
// of its own, named by that session's UUID; neither file holds the other's
// calls, and bob cannot complete alice's call by its id. Before, both went
// to plan.yaml.
func TestAuditPerTenant(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		dir := t.TempDir()
		api := newAPI(t, db, Options{AuditEnabled: true, AuditDir: dir})
		ids, calls := map[string]string{}, map[string]string{}
		for _, u := range []string{"alice", "bob"} {
			if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/plan/messages", user: u,
				body: `[{"role":"user","content":"` + u + ` asks"}]`}); code != 201 {
				t.Fatalf("%s's store: %d %s", u, code, body)
			}
			code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/plan/messages?format=pydantic-ai&prompt=" + u + "+load", user: u})
			if calls[u] = h.Get(AuditCallHeader); code != 200 || calls[u] == "" {
				t.Fatalf("%s's audited load: %d %q %s", u, code, calls[u], body)
			}
			if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/plan/audit", user: u,
				body: `{"agent_name":"` + u + `","prompt":"` + u + ` call"}`}); code != 201 || !strings.Contains(body, `"recorded":true`) {
				t.Fatalf("%s's recorded call: %d %s", u, code, body)
			}
			ids[u] = sessionUUID(t, api, u, "plan")
		}
		if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/plan/audit", user: "bob",
			body: `{"call_id":"` + calls["alice"] + `","model":"bob's"}`}); code != 400 || !strings.Contains(body, `"field":"call_id"`) {
			t.Errorf("bob completing alice's call id: %d %s", code, body)
		}
		var names []string
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		sort.Strings(names)
		want := []string{ids["alice"] + ".yaml", ids["bob"] + ".yaml"}
		sort.Strings(want)
		if strings.Join(names, " ") != strings.Join(want, " ") {
			t.Fatalf("dump files %v, want %v (alice's and bob's session UUIDs)", names, want)
		}
		for _, u := range []string{"alice", "bob"} {
			f, err := audit.Read(dir, ids[u])
			if err != nil || f.SessionID != ids[u] || len(f.Invocations) != 2 {
				t.Fatalf("%s's dump: %v %+v", u, err, f)
			}
			for i, p := range []string{u + " load", u + " call"} {
				if inv := f.Invocations[i]; inv["prompt"] != p || inv["model"] != nil {
					t.Errorf("%s's dump, invocation %d: %v", u, i, inv)
				}
			}
		}
	})
}

// A session's dump is bounded (SPEC §6: what one tenant records can
// neither hide nor slow another's): past 32 MiB, a recorded call is answered
// recorded:false with the reason and the file is left as it is (before, it
// was parsed and rewritten, whatever its size); an audited load still
// answers, without a call id; another tenant's dump takes its calls as
// ever.
func TestAuditDumpBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	api := newAPI(t, dbtest.NewSQLite(t), Options{AuditEnabled: true, AuditDir: dir})
	sid := uuid.NewString() // a UUID names the same file before and after dumps were named by UUID
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/" + sid + "/messages", user: "alice",
		body: `[{"role":"user","content":"hi"}]`}); code != 201 {
		t.Fatalf("store: %d %s", code, body)
	}
	full := append([]byte("session_id: "+sid+"\ninvocations: []\n# "), bytes.Repeat([]byte("x"), audit.MaxFileBytes)...)
	if err := os.WriteFile(audit.Path(dir, sid), full, 0o600); err != nil {
		t.Fatal(err)
	}
	code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/" + sid + "/audit", user: "alice", body: `{"agent_name":"a","prompt":"p"}`})
	if code != 200 || !strings.Contains(body, `"recorded":false`) || !strings.Contains(body, "32.0 MiB") {
		t.Fatalf("a call into a full dump: %d %.300s", code, body)
	}
	if st, err := os.Stat(audit.Path(dir, sid)); err != nil || st.Size() != int64(len(full)) {
		t.Fatalf("the full dump changed: %v %v", st, err)
	}
	code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/" + sid + "/messages?format=pydantic-ai&prompt=p", user: "alice"})
	if code != 200 || !strings.Contains(body, `"content":"hi"`) || h.Get(AuditCallHeader) != "" {
		t.Fatalf("an audited load into a full dump: %d %q %.300s", code, h.Get(AuditCallHeader), body)
	}
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/plan/messages", user: "bob", body: `[{"role":"user","content":"hi"}]`}); code != 201 {
		t.Fatalf("bob's store: %d %s", code, body)
	}
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/plan/audit", user: "bob", body: `{"prompt":"p"}`}); code != 201 || !strings.Contains(body, `"recorded":true`) {
		t.Fatalf("bob's call: %d %s", code, body)
	}
}

// An audited load of a session that was never stored records nothing: a
// tenant loading 200 made-up names made 200 dump files, which no session
// limit counted and no purge removed.
func TestAuditedLoadOfNoSessionWritesNoFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	api := newAPI(t, dbtest.NewSQLite(t), Options{AuditEnabled: true, AuditDir: dir})
	for i := range 5 {
		code, body, h := do(t, api, call{method: "GET", path: fmt.Sprintf("/v1/sessions/ghost-%d/messages?format=pydantic-ai&prompt=p", i), user: "bob"})
		if code != 200 || h.Get(AuditCallHeader) != "" {
			t.Fatalf("load of a session never stored: %d %q %s", code, h.Get(AuditCallHeader), body)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Errorf("audit files for sessions never stored: %v", files)
	}
	// A session that exists is still audited.
	if code, _, _ := do(t, api, call{method: "POST", path: "/v1/sessions/real/messages", user: "bob", body: `[{"role":"user","content":"hi"}]`}); code != 201 {
		t.Fatal(code)
	}
	if _, _, h := do(t, api, call{method: "GET", path: "/v1/sessions/real/messages?format=pydantic-ai", user: "bob"}); h.Get(AuditCallHeader) == "" {
		t.Error("an audited load of a stored session recorded nothing")
	}
}

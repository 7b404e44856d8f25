package viewer_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
)

// api sends one request to the API as key's user and returns its status
// and body.
func api(t *testing.T, base, key, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The audit page per tenant (SPEC §6, amended): alice and bob each name a
// session "plan", and each one's audit page shows that session's calls,
// read from its own dump (named by its UUID) and nothing else. Before,
// both dumps were plan.yaml and the page attributed a call by the role and
// time of the messages it saw: a call of bob's citing alice's message times
// showed on her page, and her call that saw no history did not. Nor can
// 10,000 other files in the directory hide her calls (the page read at most
// 10,000 files, in name order).
func TestAuditPagePerTenant(t *testing.T) {
	dir := t.TempDir()
	h, err := httpapi.New(httpapi.Options{Stores: storesOf(t, dbtest.NewSQLite(t), viewerT), UI: true, AuditEnabled: true, AuditDir: dir,
		APIKeys: []httpapi.APIKey{{Key: aliceKey, UserID: "alice"}, {Key: bobKey, UserID: "bob"}}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{srv: httptest.NewServer(h)}
	t.Cleanup(f.srv.Close)
	base := f.srv.URL
	ids := map[string]string{}
	for u, key := range map[string]string{"alice": aliceKey, "bob": bobKey} {
		code, body := api(t, base, key, "POST", "/v1/sessions/plan/messages", `[{"role":"user","content":"`+u+` asks"}]`)
		var res struct {
			SessionID string `json:"session_id"`
		}
		if err := json.Unmarshal([]byte(body), &res); code != 201 || err != nil || res.SessionID == "" {
			t.Fatalf("%s's store: %d %s", u, code, body)
		}
		ids[u] = res.SessionID
	}
	// Alice: an audited load (it saw her message) and a call that saw no
	// history.
	if code, body := api(t, base, aliceKey, "GET", "/v1/sessions/plan/messages?format=pydantic-ai&prompt=alice+load", ""); code != 200 {
		t.Fatalf("alice's load: %d %s", code, body)
	}
	if code, body := api(t, base, aliceKey, "POST", "/v1/sessions/plan/audit", `{"prompt":"alice first call"}`); code != 201 {
		t.Fatalf("alice's call: %d %s", code, body)
	}
	// Bob: a call that claims to have seen alice's message (its role and
	// stored time).
	code, body := api(t, base, aliceKey, "GET", "/v1/sessions/plan/messages", "")
	var hist []map[string]any
	if err := json.Unmarshal([]byte(body), &hist); code != 200 || err != nil || len(hist) != 1 {
		t.Fatalf("alice's history: %d %s", code, body)
	}
	forged := fmt.Sprintf(`{"prompt":"bob forged","history":[{"role":"user","content":"x","timestamp":%q}]}`, hist[0]["timestamp"])
	if code, body := api(t, base, bobKey, "POST", "/v1/sessions/plan/audit", forged); code != 201 {
		t.Fatalf("bob's call: %d %s", code, body)
	}
	check := func(when string) {
		t.Helper()
		for u, key := range map[string]string{"alice": aliceKey, "bob": bobKey} {
			c, _ := f.client(t, key, u)
			page := get(t, c, base+"/ui/sessions/"+ids[u]+"/audit", http.StatusOK)
			want, not := []string{"alice load", "alice first call"}, []string{"bob forged"}
			if u == "bob" {
				want, not = not, want
			}
			for _, w := range want {
				if !strings.Contains(page, w) {
					t.Errorf("%s: %s's audit page lacks %q", when, u, w)
				}
			}
			for _, n := range not {
				if strings.Contains(page, n) {
					t.Errorf("%s: %s's audit page shows %q", when, u, n)
				}
			}
			if n := strings.Count(page, `class="call-link"`); n != len(want) {
				t.Errorf("%s: %s's audit page shows %d calls, want %d", when, u, n, len(want))
			}
		}
	}
	check("two tenants")
	// 10,000 dumps of other sessions, named to come first.
	for i := range 10000 {
		name := fmt.Sprintf("-h%05d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte("session_id: "+name+"\ninvocations: []\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	check("10,000 other files")
}

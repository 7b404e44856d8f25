package httpapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
)

// A query parameter given twice (?last=2&last=3) is a 400 naming it on
// every /v1 route, before the handler reads either value: each route is
// tried with each query parameter its OpenAPI operation lists (a route
// that lists none, with one it does not read). Once is fine.
func TestRepeatedQueryParameterRefused(t *testing.T) {
	t.Parallel()
	api := newAPI(t, dbtest.NewSQLite(t), Options{})
	if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/s/messages", user: "alice", body: `[{"role":"user","content":"q"}]`}); code != 201 {
		t.Fatalf("store: %d %s", code, body)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct {
				Ref  string `json:"$ref"`
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, route := range Routes() {
		method, path, _ := strings.Cut(route, " ")
		if !strings.HasPrefix(path, "/v1/") {
			continue
		}
		var names []string
		for _, p := range doc.Paths[path][strings.ToLower(method)].Parameters {
			if p.In == "query" {
				names = append(names, p.Name)
			}
		}
		if len(names) == 0 {
			names = []string{"unread"}
		}
		target := strings.ReplaceAll(path, "{id}", "s")
		for _, name := range names {
			tried++
			c := call{method: method, path: target + "?" + name + "=2&" + name + "=3", user: "alice", body: `{}`}
			if method == "POST" && strings.HasSuffix(path, "messages") {
				c.body = `[{"role":"user","content":"never stored"}]`
			}
			code, body, _ := do(t, api, c)
			if code != 400 || !strings.Contains(body, `"field":"`+name+`"`) || !strings.Contains(body, "more than once") {
				t.Errorf("%s ?%s twice: %d %s", route, name, code, body)
			}
		}
	}
	if tried < 20 {
		t.Fatalf("only %d route parameters tried", tried)
	}
	// Nothing was stored, and a parameter given once is read as before.
	code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/s/messages?last=1&compress=false", user: "alice"})
	if code != 200 || strings.Contains(body, "never stored") || !strings.Contains(body, `"q"`) {
		t.Fatalf("a load after the refusals: %d %s", code, body)
	}
}

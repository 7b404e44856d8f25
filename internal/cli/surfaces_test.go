package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/cli"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

// One error, one meaning on every surface: each case is met through the
// CLI, the HTTP API and MCP on the same database, and the exit code, the
// status and code, and the tool error's code must be what the error's class
// (sessionstore.Classify) says. Storage switched off is refused everywhere
// beyond store, load and lookup (SPEC §7); the viewer's share is
// viewer.TestViewerRefusesWhenStorageOff.
func TestSurfacesAgreeOnErrors(t *testing.T) {
	t.Parallel()
	dbPath := filepath.Join(t.TempDir(), "s.db")
	env := map[string]string{"REMSTORE_DB": dbPath, "REMSTORE_USER_ID": "alice"}
	if r := run(t, env, `[{"role":"user","content":"hi"}]`, "store", "--session-id", "done"); r.code != 0 {
		t.Fatalf("store: %d %s", r.code, r.stderr)
	}
	if r := run(t, env, "", "sessions", "status", "done", "completed"); r.code != 0 {
		t.Fatalf("complete: %d %s", r.code, r.stderr)
	}
	missingKey := "session-6f1c3b7e-8a53-4b1e-9a55-3f3d2c1b0a99-msg-0"
	for _, c := range []struct {
		name string
		off  bool
		code string // the class's code
		kind sessionstore.Kind
		exit int
		cli  []string
		in   string
		api  [3]string // method, path, body
		hdr  [2]string // a header of the API call
		mcp  string    // a tools/call's params, "" = no MCP tool for it
	}{
		{name: "not found", code: "not_found", kind: sessionstore.NotFound, exit: 1,
			cli: []string{"lookup", missingKey}, api: [3]string{"GET", "/v1/lookup?key=" + missingKey},
			mcp: `{"name":"rem_lookup","arguments":{"key":"` + missingKey + `"}}`},
		{name: "bad input", code: "invalid_input", kind: sessionstore.BadInput, exit: 2,
			cli: []string{"lookup", "not-a-key"}, api: [3]string{"GET", "/v1/lookup?key=not-a-key"},
			mcp: `{"name":"rem_lookup","arguments":{"key":"not-a-key"}}`},
		{name: "store into a completed session", code: "session_not_active", kind: sessionstore.Conflict, exit: 2,
			cli: []string{"store", "--session-id", "done"}, in: `[{"role":"user","content":"more"}]`,
			api: [3]string{"POST", "/v1/sessions/done/messages", `[{"role":"user","content":"more"}]`}},
		{name: "a guarded store onto a session that moved on", code: "conflict", kind: sessionstore.Conflict, exit: 2,
			cli: []string{"store", "--session-id", "done", "--expect-last", "empty"}, in: `[{"role":"user","content":"more"}]`,
			api: [3]string{"POST", "/v1/sessions/done/messages", `[{"role":"user","content":"more"}]`}, hdr: [2]string{httpapi.ExpectLastHeader, "empty"}},
		{name: "storage off: list", off: true, code: "storage_off", kind: sessionstore.Unavailable, exit: 3,
			cli: []string{"sessions", "list"}, api: [3]string{"GET", "/v1/sessions"},
			mcp: `{"name":"session_history","arguments":{"session_id":"done"}}`},
		{name: "storage off: show", off: true, code: "storage_off", kind: sessionstore.Unavailable, exit: 3,
			cli: []string{"sessions", "get", "done"}, api: [3]string{"GET", "/v1/sessions/done"},
			mcp: `{"name":"rem_lookup","arguments":{"key":"` + missingKey + `"}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := map[string]string{}
			for k, v := range env {
				e[k] = v
			}
			if c.off {
				e["POSTGRES_ENABLED"] = "false"
			}
			if r := run(t, e, c.in, c.cli...); r.code != c.exit {
				t.Errorf("CLI %v: exit %d, want %d (%s)", c.cli, r.code, c.exit, r.stderr)
			}
			status, code := apiCall(t, dbPath, c.off, c.api, c.hdr)
			if status != c.kind.HTTPStatus() || code != c.code {
				t.Errorf("API %s %s: %d %q, want %d %q", c.api[0], c.api[1], status, code, c.kind.HTTPStatus(), c.code)
			}
			if c.mcp == "" {
				return
			}
			var got struct {
				Result struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			line := mcpCall(t, e, c.mcp)
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("MCP answer %s: %v", line, err)
			}
			if !got.Result.IsError || len(got.Result.Content) != 1 || !strings.HasPrefix(got.Result.Content[0].Text, c.code+": ") {
				t.Errorf("MCP %s: %s, want an error starting %q", c.mcp, line, c.code+": ")
			}
		})
	}
}

// apiCall sends one request to the API on the SQLite file, as alice, with
// storage on or off, and returns the status and the error body's code.
func apiCall(t *testing.T, dbPath string, off bool, req [3]string, hdr [2]string) (int, string) {
	t.Helper()
	ctx := context.Background()
	db, err := repository.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := migrations.Check(ctx, db); err != nil {
		t.Fatal(err)
	}
	stores, err := sessionstore.NewStores(db, sessionstore.Options{Disabled: off})
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Options{Stores: stores, APIKeys: []httpapi.APIKey{{Key: "alice-key-0123456789", UserID: "alice"}}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(req[0], req[1], strings.NewReader(req[2]))
	r.Header.Set("Authorization", "Bearer alice-key-0123456789")
	r.Header.Set("Content-Type", "application/json")
	if hdr[0] != "" {
		r.Header.Set(hdr[0], hdr[1])
	}
	w := httptest.NewRecorder()
	api.ServeHTTP(w, r)
	var body httpapi.ErrorBody
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil && w.Code != http.StatusOK {
		t.Fatalf("error body %s: %v", w.Body.Bytes(), err)
	}
	if w.Code == http.StatusOK {
		return w.Code, ""
	}
	return w.Code, body.Error.Code
}

// mcpCall runs `remstore mcp` with env, calls one tool (params) and returns
// the answer's line; stdin stays open until the answer came, as a client's.
func mcpCall(t *testing.T, env map[string]string, params string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		cli.RunWith(context.Background(), cli.Options{Getenv: getenv, Dir: t.TempDir()}, []string{"mcp"}, inR, outW, io.Discard)
		outW.Close()
	}()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":`+params+"}\n")
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<20)
	var answer string
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"id":1`) {
			answer = sc.Text()
			break
		}
	}
	inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("remstore mcp did not stop at the end of its input")
	}
	return answer
}

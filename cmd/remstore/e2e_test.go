package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
)

// The compiled binary, as a user runs it: serve on a free port against real
// PostgreSQL, then store -> load compressed -> lookup -> pydantic-ai, then SIGTERM.
func TestServeEndToEnd(t *testing.T) {
	t.Parallel()
	bin := filepath.Join(t.TempDir(), "remstore")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	const apiKey = "e2e-key-0123456789abcdef"
	dbURL := dbtest.NewPostgresURL(t)
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", dbURL, "--truncate-length", "20")
	cmd.Env = append(cmd.Environ(), "REMSTORE_API_KEYS="+apiKey)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := bufio.NewScanner(stderr)
	var base string
	for lines.Scan() {
		if _, addr, ok := strings.Cut(lines.Text(), "listening on "); ok {
			base = addr
			break
		}
	}
	if base == "" {
		t.Fatal("the server never said where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	req := func(method, path, body string) (int, []byte) {
		t.Helper()
		r, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+apiKey)
		r.Header.Set("X-User-Id", "alice")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	long := strings.Repeat("a long and detailed answer ", 10)
	if code, b := req("POST", "/v1/sessions/e2e/messages", `[{"role":"user","content":"hi"},{"role":"assistant","content":"`+long+`"},{"role":"tool","content":"{\"ok\":true}","tool_name":"search"}]`); code != 201 {
		t.Fatalf("store: %d %s", code, b)
	}
	// serve indexes what was stored for search in the background, with no
	// search asking: the three messages' words are there within seconds.
	db := dbtest.OpenRaw(t, dbURL)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var docs int
		if err := db.NewRaw("SELECT count(*) FROM remstore_search_docs").Scan(context.Background(), &docs); err != nil {
			t.Fatal(err)
		}
		if docs == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve indexed %d of 3 messages for search in 20 s", docs)
		}
	}
	code, b := req("GET", "/v1/sessions/e2e/messages", "")
	var hist []map[string]any
	if code != 200 || json.Unmarshal(b, &hist) != nil || hist[1]["_compressed"] != true {
		t.Fatalf("load: %d %s", code, b)
	}
	key := hist[1]["_entity_key"].(string)
	code, b = req("GET", "/v1/lookup?key="+url.QueryEscape("REM LOOKUP "+key), "")
	var lk struct{ Content string }
	if code != 200 || json.Unmarshal(b, &lk) != nil || lk.Content != long {
		t.Fatalf("lookup: %d %s", code, b)
	}
	code, b = req("GET", "/v1/sessions/e2e/messages?format=pydantic-ai&system_prompt=S", "")
	if code != 200 || !strings.Contains(string(b), `"part_kind":"tool-call"`) || !strings.Contains(string(b), `"tool_call_id":"call_2"`) {
		t.Fatalf("pydantic-ai: %d %s", code, b)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
}

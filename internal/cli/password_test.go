package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/cli"
	"github.com/remstore/remstore/internal/dbtest"
)

// secret is the password every connection string below carries; no output,
// log line or error may show it.
const secret = "S3cr3t-pw-9f2c"

// passwordForms are one database in every form a user may type it: URL and
// keyword/value, each reachable (the test server trusts its socket, so the
// password is carried and ignored) and refused (nothing listens on port 1).
func passwordForms(t *testing.T) map[string]string {
	t.Helper()
	base, err := url.Parse(dbtest.NewPostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	user := base.User.Username()
	withPW := *base
	withPW.User = url.UserPassword(user, secret)
	q := base.Query()
	kw := fmt.Sprintf("user=%s password=%s dbname=%s sslmode=disable search_path=%s", user, secret, strings.TrimPrefix(base.Path, "/"), q.Get("search_path"))
	if h := q.Get("host"); h != "" {
		kw = "host=" + h + " " + kw
	} else {
		kw = "host=" + base.Hostname() + " port=" + base.Port() + " " + kw
	}
	return map[string]string{
		"url":             withPW.String(),
		"keyword":         kw,
		"url refused":     "postgres://u:" + secret + "@127.0.0.1:1/db?connect_timeout=2",
		"keyword refused": "host=127.0.0.1 port=1 user=u password=" + secret + " dbname=db connect_timeout=2",
	}
}

// TestNoCommandPrintsThePassword runs every command that opens the
// database, at debug log level, with each form given by flag, by
// REMSTORE_DB and by the peer's variable, and greps what it printed.
func TestNoCommandPrintsThePassword(t *testing.T) {
	forms := passwordForms(t)
	dir := t.TempDir()
	backup := filepath.Join(dir, "backup.jsonl")
	hist := `[{"role":"user","content":"hi"},{"role":"assistant","content":"` + strings.Repeat("long answer ", 60) + `"}]`
	cmds := []struct {
		stdin string
		args  []string
	}{
		{"", []string{"env"}},
		{"", []string{"env", "--json"}},
		{"", []string{"migrate", "up"}},
		{"", []string{"migrate", "status"}},
		{hist, []string{"store", "--session-id", "pw-1"}},
		{"", []string{"load", "--session-id", "pw-1"}},
		{"", []string{"load", "--session-id", "pw-1", "--format", "pydantic-ai"}},
		{"", []string{"load", "--session-id", "nope"}},
		{"", []string{"lookup", "--session-id", "pw-1", "--index", "1"}},
		{"", []string{"lookup", "session-00000000-0000-0000-0000-000000000000-msg-1"}},
		{"", []string{"sessions", "list"}},
		{"", []string{"sessions", "get", "pw-1"}},
		{"", []string{"sessions", "usage", "pw-1"}},
		{"", []string{"sessions", "fork", "pw-1", "--new-session-id", "pw-2"}},
		{"", []string{"sessions", "delete", "pw-2"}},
		{"", []string{"export", "--all", "-o", backup}},
		{"", []string{"import", backup}},
		{"", []string{"citus", "status"}},
		{"", []string{"demo"}},
	}
	for name, db := range forms {
		for _, via := range []string{"flag", "REMSTORE_DB", "POSTGRES__CONNECTION_STRING"} {
			t.Run(name+"/"+via, func(t *testing.T) {
				env := map[string]string{"REMSTORE_USER_ID": "alice", "HOME": dir, "REMSTORE_CONNECT_TIMEOUT": "2s"}
				var extra []string
				if via == "flag" {
					extra = []string{"--db", db}
				} else {
					env[via] = db
				}
				answered := 0
				for _, c := range cmds {
					r := run(t, env, c.stdin, append(append([]string{}, c.args...), append(extra, "--log-level", "debug")...)...)
					if strings.Contains(r.stdout+r.stderr, secret) {
						t.Errorf("%v printed the password:\nstdout: %s\nstderr: %s", c.args, r.stdout, r.stderr)
					}
					if r.code == cli.ExitOK {
						answered++
					}
				}
				// The test proves something only if the reachable forms
				// really reached the database and the refused ones failed.
				if refused := strings.HasSuffix(name, "refused"); refused && answered > 2 || !refused && answered < len(cmds)-3 {
					t.Errorf("%d of %d commands succeeded", answered, len(cmds))
				}
			})
		}
	}
}

// syncBuffer is a bytes.Buffer the server's logger and the test can share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// servedCLI is `remstore serve` run in-process on a free loopback port.
type servedCLI struct {
	addr   string
	logs   *syncBuffer // its stdout and stderr
	cancel context.CancelFunc
	done   chan int
}

// serveCLI starts serve with env and args (--addr is added) and waits until
// get answers /healthz; stop ends it and returns its exit code.
func serveCLI(t *testing.T, env map[string]string, get func(url string) (*http.Response, error), scheme string, args ...string) *servedCLI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &servedCLI{addr: ln.Addr().String(), logs: &syncBuffer{}, done: make(chan int, 1)}
	_ = ln.Close()
	var ctx context.Context
	ctx, s.cancel = context.WithCancel(context.Background())
	t.Cleanup(s.cancel)
	dir := t.TempDir()
	go func() {
		getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		s.done <- cli.RunWith(ctx, cli.Options{Getenv: getenv, Dir: dir}, append([]string{"serve", "--addr", s.addr}, args...),
			strings.NewReader(""), s.logs, s.logs)
	}()
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := get(scheme + "://" + s.addr + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not answer: %v\n%s", err, s.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stop cancels serve (as SIGTERM does) and returns its exit code.
func (s *servedCLI) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
		return -1
	}
}

// TestServeNeverShowsThePassword starts serve on a keyword DSN with a
// password, calls every route (and the viewer) at debug log level, and greps
// every response, header and log line.
func TestServeNeverShowsThePassword(t *testing.T) {
	for _, name := range []string{"url", "keyword"} {
		t.Run(name, func(t *testing.T) {
			forms := passwordForms(t) // a schema of its own: serve migrates it
			srv := serveCLI(t, map[string]string{"REMSTORE_DB": forms[name], "HOME": t.TempDir()}, http.Get, "http",
				"--insecure-no-auth", "--ui", "--log-level", "debug")
			base := "http://" + srv.addr
			client := &http.Client{Timeout: 10 * time.Second}
			seen := 0
			call := func(method, path, body string) {
				req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
				req.Header.Set("X-User-Id", "alice")
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", method, path, err)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				var hdr bytes.Buffer
				_ = resp.Header.Write(&hdr)
				if strings.Contains(string(b)+hdr.String(), secret) {
					t.Errorf("%s %s answered the password: %s", method, path, b)
				}
				seen++
			}
			call("POST", "/v1/sessions/s1/messages", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"`+strings.Repeat("x", 900)+`"}]}`)
			for _, route := range httpapi.Routes() {
				method, path, _ := strings.Cut(route, " ")
				path = strings.ReplaceAll(path, "{id}", "s1")
				body := ""
				switch route {
				case "POST /v1/messages":
					body = `{"session_id":"s2","messages":[{"role":"user","content":"hi"}]}`
				case "POST /v1/sessions/{id}/messages":
					body = `{"messages":[{"role":"bot","content":"hi"}]}` // refused: an error answer
				case "PATCH /v1/sessions/{id}":
					body = `{"agent":"planner"}`
				case "POST /v1/sessions/{id}/fork":
					body = `{"new_session_id":"s3"}`
				case "GET /v1/lookup":
					path += "?key=session-00000000-0000-0000-0000-000000000000-msg-1"
				}
				call(method, path, body)
			}
			for _, p := range []string{"/v1/sessions/s1/messages?format=pydantic-ai", "/v1/sessions/nope", "/ui/", "/ui/sessions", "/ui/sessions/s2"} {
				call("GET", p, "")
			}
			if code := srv.stop(t); code != 0 {
				t.Errorf("serve exit %d", code)
			}
			out := srv.logs.String()
			if strings.Contains(out, secret) {
				t.Errorf("serve logged the password:\n%s", out)
			}
			// The logs did record the requests and the database they used.
			if seen < len(httpapi.Routes()) || !strings.Contains(out, "route=") || !strings.Contains(out, "migrated the database") {
				t.Errorf("%d calls; logs:\n%s", seen, out)
			}
		})
	}
}

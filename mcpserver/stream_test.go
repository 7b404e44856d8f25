package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/sessionstore"
)

// stream is Serve on pipes, as `remstore mcp` runs it on stdio.
type stream struct {
	t     testing.TB
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
}

func startStream(t testing.TB) *stream {
	st, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stream{t: t, in: inW, lines: make(chan map[string]any, 64), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { s.done <- Serve(ctx, st, "test", inR, outW); _ = outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			s.lines <- m
		}
		close(s.lines)
	}()
	t.Cleanup(func() { _ = inW.Close(); cancel() })
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	s.until(`0`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *stream) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("the server stopped reading: %v", err)
	}
}

// until returns the messages up to and including the response whose id
// (as JSON) is id; it fails the test when none comes.
func (s *stream) until(id string) []map[string]any {
	s.t.Helper()
	var got []map[string]any
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the server ended (%v) before answering %s; saw %v", <-s.done, id, got)
			}
			got = append(got, m)
			if b, _ := json.Marshal(m["id"]); string(b) == id && (m["result"] != nil || m["error"] != nil) {
				return got
			}
		case <-timeout:
			s.t.Fatalf("no answer to %s; saw %v", id, got)
		}
	}
}

// all returns the messages up to the responses to every one of ids.
func (s *stream) all(ids ...string) []map[string]any {
	s.t.Helper()
	var got []map[string]any
	pending := map[string]bool{}
	for _, id := range ids {
		pending[id] = true
	}
	timeout := time.After(10 * time.Second)
	for len(pending) > 0 {
		select {
		case m, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the server ended (%v) before answering %v; saw %v", <-s.done, ids, got)
			}
			got = append(got, m)
			if b, _ := json.Marshal(m["id"]); m["result"] != nil || m["error"] != nil {
				delete(pending, string(b))
			}
		case <-timeout:
			s.t.Fatalf("no answer to %v; saw %v", ids, got)
		}
	}
	return got
}

func errorCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return int(c)
}

// Issue 26: one bad line made `remstore mcp` exit 3 without a JSON-RPC
// error, and the next valid call was never answered. Each line below gets
// its error, and the call after it is answered.
func TestStreamSurvivesBadLines(t *testing.T) {
	t.Parallel()
	deep := `{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"rem_lookup","arguments":{"key":` +
		strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}}}`
	cases := []struct {
		name, line string
		code       int    // 0: no error line expected
		id         string // the error's id, as JSON
	}{
		{"not JSON", `hello`, -32700, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/ca`, -32700, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xff\"}", -32700, "null"},
		{"empty object", `{}`, -32600, "null"},
		{"number", `42`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, "null"},
		{"no jsonrpc", `{"id":4,"method":"ping"}`, -32600, "4"},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":7}`, -32600, "5"},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, "null"},
		{"params a string", `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":"x"}`, -32602, `"p"`},
		{"nested 1,200 deep", deep, -32602, `"d"`},
		{"nested 20,000 deep", strings.Repeat("[", 20000), -32700, "null"},
		{"too long", `{"jsonrpc":"2.0","id":9,"method":"ping","x":"` + strings.Repeat("a", MaxLineBytes) + `"}`, -32600, "null"},
		{"blank", `   `, 0, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":10,"method":"no/such"}`, -32601, "10"},
		{"unknown tool", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"nope","arguments":{}}}`, 0, ""},
	}
	s := startStream(t)
	for i, c := range cases {
		s.send(c.line)
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"rem_lookup","arguments":{"key":"nope"}}}`, 1000+i)
		s.send(call)
		callID := fmt.Sprint(1000 + i)
		// The SDK answers requests concurrently: an error it sends (an
		// unknown method) may come after the next call's answer, so wait
		// for both ids.
		want := []string{callID}
		if c.code != 0 && c.id != "null" {
			want = append(want, c.id)
		}
		got := s.all(want...)
		var errs []map[string]any
		for _, m := range got {
			b, _ := json.Marshal(m["id"])
			if string(b) == callID {
				if m["result"] == nil {
					t.Fatalf("%s: the call after it was not answered with a result: %v", c.name, m)
				}
				continue
			}
			if m["error"] != nil {
				errs = append(errs, m)
			}
		}
		if c.code == 0 {
			continue
		}
		if len(errs) != 1 || errorCode(errs[0]) != c.code {
			t.Fatalf("%s: want one error %d, got %v", c.name, c.code, errs)
		}
		if b, _ := json.Marshal(errs[0]["id"]); string(b) != c.id {
			t.Fatalf("%s: error id %s, want %s", c.name, b, c.id)
		}
	}
}

// FuzzStreamLine: whatever one line holds, the server answers the next
// valid call.
func FuzzStreamLine(f *testing.F) {
	for _, seed := range []string{`hello`, `{}`, `[]`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}`, "\xff\xfe", `{"jsonrpc":"2.0","id":"after","method":"ping"}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s := startStream(t)
		s.send(strings.ReplaceAll(line, "\n", " "))
		s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
		s.until(`"after"`)
	})
}

// Every request read before the end of input is answered before Serve
// returns (issue 43: `printf 'initialize…\ninitialized…\ntools/list…\n' |
// remstore mcp` printed the tools/list answer in 3 of 5 runs).
func TestEveryRequestAnsweredAtEOF(t *testing.T) {
	st, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rem_lookup","arguments":{"key":"session-00000000-0000-0000-0000-000000000000-msg-1"}}}` + "\n"
	for run := range 30 {
		var out strings.Builder
		if err := Serve(context.Background(), st, "test", strings.NewReader(in), &out); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		for _, id := range []string{`"id":1`, `"id":2`, `"id":3`} {
			if !strings.Contains(out.String(), id) {
				t.Fatalf("run %d: no answer with %s:\n%s", run, id, out.String())
			}
		}
	}
}

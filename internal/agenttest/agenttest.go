// Package agenttest runs a model SDK adapter's agent loop twice, history in
// memory and history in remstore, and compares what the model was sent: the
// shared half of every sdk/ package's loop test.
package agenttest

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
)

// System is the system prompt both loops send.
const System = "You are a travel agent. Keep answers short."

// Session is the session key the remstore loop keeps its history under.
const Session = "trip-1"

// Large is a truncate length no answer reaches: nothing is cut.
const Large = 100000

// Small cuts the long answer: its first and last Small code points stay.
const Small = 100

// Backend is a place a loop keeps its history in.
type Backend struct {
	Name string
	// New returns an empty store loading with truncate length t.
	New func(t *testing.T, truncate int) sdk.Store
}

// Backends are PostgreSQL and SQLite through the library, and through
// serve (package httpapi, in process) with the Go client.
func Backends() []Backend {
	lib := func(name string, open func(testing.TB) *repository.DB) Backend {
		return Backend{Name: name, New: func(t *testing.T, truncate int) sdk.Store {
			st, err := sessionstore.New(open(t), sessionstore.Options{UserID: "alice", TruncateLength: truncate})
			if err != nil {
				t.Fatal(err)
			}
			return remstore.Library(st)
		}}
	}
	serve := func(name string, open func(testing.TB) *repository.DB) Backend {
		return Backend{Name: name, New: func(t *testing.T, truncate int) sdk.Store {
			return NewServeClient(t, open(t), truncate).Agent()
		}}
	}
	return []Backend{lib("postgres", dbtest.NewPostgres), lib("sqlite", dbtest.NewSQLite),
		serve("serve-postgres", dbtest.NewPostgres), serve("serve-sqlite", dbtest.NewSQLite)}
}

// APIKey is the key NewServeClient's server takes, bound to alice.
const APIKey = "agenttest-key-0123456789"

// NewServeClient starts remstore serve's API in process on db (loads cut
// at truncate) and returns a Go client of it acting as alice.
func NewServeClient(t testing.TB, db *repository.DB, truncate int, adjust ...func(*httpapi.Options)) *client.Client {
	t.Helper()
	url := NewServe(t, db, truncate, adjust...)
	c, err := client.New(url, client.Options{APIKey: APIKey})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// NewServe starts remstore serve's API in process on db (loads cut at
// truncate; APIKey acts as alice) and returns its URL.
func NewServe(t testing.TB, db *repository.DB, truncate int, adjust ...func(*httpapi.Options)) string {
	t.Helper()
	srv := httptest.NewServer(NewAPI(t, db, truncate, adjust...))
	t.Cleanup(srv.Close)
	return srv.URL
}

// NewAPI is NewServe's handler, for a test that starts and stops its server.
func NewAPI(t testing.TB, db *repository.DB, truncate int, adjust ...func(*httpapi.Options)) http.Handler {
	t.Helper()
	stores, err := sessionstore.NewStores(db, sessionstore.Options{TruncateLength: truncate})
	if err != nil {
		t.Fatal(err)
	}
	o := httpapi.Options{Stores: stores, APIKeys: []httpapi.APIKey{{Key: APIKey, UserID: "alice"}},
		Registry: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler)}
	for _, f := range adjust { // e.g. auditing on
		f(&o)
	}
	api, err := httpapi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// Memory is the scripted conversation (fakellm.Prompts) with its history
// kept in the SDK's own in-memory form, as the SDK's users write it.
type Memory func(ctx context.Context) error

// Check runs memory once, and the same conversation with the history in
// remstore on every backend (each prompt an sdk.RunTurn of ask; tool nil
// runs fakellm's tools as plain text results), twice: with nothing cut,
// every request body must equal the memory run's byte for byte; with the long
// answer cut, the first request after the cut must be the memory run's with
// that answer replaced by SPEC §4's hint, hand-built here, and the agent
// must recover the cut text through rem_lookup.
func Check(t *testing.T, rec *fakellm.Recorder, memory Memory, ask sdk.Asker, tool sdk.Tooler) {
	ctx := context.Background()
	if tool == nil {
		tool = func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
			return sdk.ToolResult(c, fakellm.RunTool(c.Name, c.Arguments)), nil
		}
	}
	loop := func(st sdk.Store) error {
		for _, p := range fakellm.Prompts {
			if _, err := sdk.RunTurn(ctx, st, Session, p, ask, tool); err != nil {
				return err
			}
		}
		return nil
	}
	rec.Bodies()
	if err := memory(ctx); err != nil {
		t.Fatalf("memory loop: %v", err)
	}
	mem := rec.Bodies()
	if len(mem) < 4 {
		t.Fatalf("memory loop made %d requests", len(mem))
	}
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, Large)
			if err := loop(st); err != nil {
				t.Fatalf("remstore loop: %v", err)
			}
			sameRequests(t, mem, rec.Bodies())

			st = b.New(t, Small)
			if err := loop(st); err != nil {
				t.Fatalf("remstore loop, cut: %v", err)
			}
			cut := rec.Bodies()
			checkCut(t, ctx, st, mem, cut)
		})
	}
}

var keyRE = regexp.MustCompile(`REM LOOKUP (session-([0-9a-f-]{36})-msg-([0-9]+)) to recover`)

// checkCut finds the first request where the remstore run differs from
// memory; it must differ only in the long answer, cut as SPEC §4 says.
func checkCut(t *testing.T, ctx context.Context, st sdk.Store, mem, cut [][]byte) {
	t.Helper()
	i := 0
	for i < len(mem) && i < len(cut) && jsonEqual(mem[i], cut[i]) {
		i++
	}
	if i == len(mem) || i == len(cut) {
		t.Fatalf("nothing was cut (%d requests, %d in memory)", len(cut), len(mem))
	}
	k := keyRE.FindSubmatch(cut[i])
	if k == nil {
		t.Fatalf("request %d has no REM LOOKUP hint:\n%s", i, cut[i])
	}
	key := string(k[1])
	// The long answer is row 4: the prompt, the calls, two results, the answer.
	if string(k[3]) != "4" {
		t.Fatalf("key %s: the answer is row 4 of the session", key)
	}
	full, err := st.Lookup(ctx, key)
	if err != nil || full != fakellm.LongAnswer {
		t.Fatalf("lookup %s: %q, %v", key, short(full), err)
	}
	r := []rune(fakellm.LongAnswer)
	hint := string(r[:Small]) + "\n\n... [Message truncated - REM LOOKUP " + key + " to recover full content] ...\n\n" + string(r[len(r)-Small:])
	want := replace(decode(t, mem[i]), fakellm.LongAnswer, hint)
	if got := decode(t, cut[i]); !reflect.DeepEqual(want, got) {
		w, _ := json.Marshal(want)
		t.Fatalf("request %d after the cut:\nwant %s\nhave %s", i, w, cut[i])
	}
	// Decide says the marker only where it reads it in an answer or in a
	// rem_lookup result; the cut answer lacks it, so one more round trip
	// (the lookup) and the marker in a later request prove the recovery.
	if len(cut) != len(mem)+1 {
		t.Fatalf("%d requests with the cut, %d in memory: want one more, the lookup", len(cut), len(mem))
	}
	if strings.Contains(string(cut[i]), fakellm.Marker) {
		t.Fatalf("the cut request still holds %s", fakellm.Marker)
	}
	found := false
	for _, b := range cut[i+1:] {
		if strings.Contains(string(b), "Day 2 is tram 28: "+fakellm.Marker) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the agent did not recover %s through rem_lookup", fakellm.Marker)
	}
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("request body: %v", err)
	}
	return v
}

// replace swaps every string value equal to old for new.
func replace(v any, old, new string) any {
	switch x := v.(type) {
	case string:
		if x == old {
			return new
		}
	case []any:
		for i := range x {
			x[i] = replace(x[i], old, new)
		}
	case map[string]any:
		for k := range x {
			x[k] = replace(x[k], old, new)
		}
	}
	return v
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// Tool runs a call of the scripted tools in a memory loop.
func Tool(name, args string) string { return fakellm.RunTool(name, args) }

// PydanticAITurn is a turn a pydantic-ai agent stored before the Go agent's
// (pydantic-ai's message JSON): two calls, one tool that returned text
// holding JSON (stored as a JSON string) and one that returned an object,
// and the answer. The memory agents of CheckAfter start from it as
// pydantic-ai sends it: the text result as the text it holds.
const PydanticAITurn = `[
{"kind":"request","parts":[{"part_kind":"user-prompt","content":"Weather in Porto?","timestamp":"2026-01-01T00:00:00Z"}]},
{"kind":"response","model_name":"gpt-4o","timestamp":"2026-01-01T00:00:01Z","parts":[
 {"part_kind":"tool-call","tool_name":"get_weather","args":{"city":"Porto"},"tool_call_id":"py_1"},
 {"part_kind":"tool-call","tool_name":"fetch_guide","args":{"city":"Porto"},"tool_call_id":"py_2"}]},
{"kind":"request","parts":[
 {"part_kind":"tool-return","tool_name":"get_weather","content":"{\"celsius\": 19}","tool_call_id":"py_1","timestamp":"2026-01-01T00:00:02Z"},
 {"part_kind":"tool-return","tool_name":"fetch_guide","content":{"city":"Porto","sights":["Ribeira","Livraria Lello"]},"tool_call_id":"py_2","timestamp":"2026-01-01T00:00:02Z"}]},
{"kind":"response","model_name":"gpt-4o","timestamp":"2026-01-01T00:00:03Z","parts":[{"part_kind":"text","content":"19 degrees in Porto."}]}
]`

// The PydanticAITurn's parts, for the memory agents to write in their SDK's form.
const (
	PyPrompt     = "Weather in Porto?"
	PyAnswer     = "19 degrees in Porto."
	PyWeather    = `{"celsius": 19}`                                        // what pydantic-ai sends for the text result
	PyGuide      = `{"city":"Porto","sights":["Ribeira","Livraria Lello"]}` // and for the object result
	PyWeatherArg = `{"city":"Porto"}`
)

// CheckAfter is Check's uncut run on a session that starts with
// PydanticAITurn, stored as pydantic-ai stores it: every request body must
// equal the memory run's byte for byte, whose history starts with that turn in the SDK's
// own form.
func CheckAfter(t *testing.T, rec *fakellm.Recorder, memory Memory, ask sdk.Asker, tool sdk.Tooler) {
	ctx := context.Background()
	if tool == nil {
		tool = func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
			return sdk.ToolResult(c, fakellm.RunTool(c.Name, c.Arguments)), nil
		}
	}
	in, err := convert.DecodePydanticAI(strings.NewReader(PydanticAITurn))
	if err != nil {
		t.Fatal(err)
	}
	rec.Bodies()
	if err := memory(ctx); err != nil {
		t.Fatalf("memory loop: %v", err)
	}
	mem := rec.Bodies()
	for _, b := range Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, Large)
			if _, err := st.Append(ctx, Session, in.Messages); err != nil {
				t.Fatal(err)
			}
			for _, p := range fakellm.Prompts {
				if _, err := sdk.RunTurn(ctx, st, Session, p, ask, tool); err != nil {
					t.Fatalf("remstore loop: %v", err)
				}
			}
			sameRequests(t, mem, rec.Bodies())
		})
	}
}

// CheckStream runs the scripted conversation twice on the library
// (SQLite), once asking with ask and once with stream, the same call
// streamed: every answer stream maps (what RunTurn stores) must equal
// ask's, field for field, and the fake server must have streamed each.
func CheckStream(t *testing.T, rec *fakellm.Recorder, ask, stream sdk.Asker) {
	t.Helper()
	ctx := context.Background()
	run := func(ask sdk.Asker) [][]byte {
		st, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice", TruncateLength: Large})
		if err != nil {
			t.Fatal(err)
		}
		var answers [][]byte
		keep := func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
			m, err := ask(ctx, h)
			if err == nil {
				b, _ := m.MarshalJSON()
				answers = append(answers, b)
			}
			return m, err
		}
		tool := func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
			return sdk.ToolResult(c, fakellm.RunTool(c.Name, c.Arguments)), nil
		}
		for _, p := range fakellm.Prompts {
			if _, err := sdk.RunTurn(ctx, remstore.Library(st), Session, p, keep, tool); err != nil {
				t.Fatalf("turn %q: %v", p, err)
			}
		}
		return answers
	}
	rec.Streams()
	plain := run(ask)
	if n := rec.Streams(); n != 0 {
		t.Fatalf("the plain run streamed %d answers", n)
	}
	streamed := run(stream)
	if n := rec.Streams(); n != len(streamed) {
		t.Fatalf("%d of %d answers were streamed", n, len(streamed))
	}
	if len(streamed) != len(plain) || len(plain) < 4 {
		t.Fatalf("%d answers streamed, %d plain", len(streamed), len(plain))
	}
	for i := range plain {
		if string(plain[i]) != string(streamed[i]) {
			t.Fatalf("answer %d differs:\nplain    %s\nstreamed %s", i, plain[i], streamed[i])
		}
	}
}

// sameRequests fails t unless the loop kept in remstore sent got, byte for
// byte, the requests the in-memory loop sent (mem).
func sameRequests(t *testing.T, mem, got [][]byte) {
	t.Helper()
	if len(got) != len(mem) {
		t.Fatalf("%d requests, memory made %d", len(got), len(mem))
	}
	for i := range mem {
		if !bytes.Equal(mem[i], got[i]) {
			t.Fatalf("request %d differs:\nmemory   %s\nremstore %s", i, mem[i], got[i])
		}
	}
}

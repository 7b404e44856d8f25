package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// A call recorded whole: an audited pydantic-ai load names its invocation
// (X-Remstore-Audit-Call), the caller completes it with what only it knows,
// and the dump then holds the SPEC §6 keys and the exchange beside them. A
// call no load recorded is appended with its history. What is wrong is a
// 400 naming the field, and nothing is written.
func TestAuditRecord(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		dir := t.TempDir()
		api := newAPI(t, db, Options{AuditEnabled: true, AuditDir: dir})
		if code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/au/messages", user: "alice",
			body: `[{"role":"user","content":"Weather in Oslo?"},{"role":"assistant","content":"Cold."}]`}); code != 201 {
			t.Fatalf("store: %d %s", code, body)
		}
		code, body, h := do(t, api, call{method: "GET", path: "/v1/sessions/au/messages?format=pydantic-ai&system_prompt=Be+brief&prompt=And+tomorrow%3F&agent_name=weather", user: "alice"})
		id := h.Get(AuditCallHeader)
		if code != 200 || len(id) != 32 {
			t.Fatalf("load: %d %q %s", code, id, body)
		}
		done := `{"call_id":"` + id + `","model":"gpt-x","model_settings":{"temperature":0.2},"tools":[{"name":"weather"}],` +
			`"answer":[{"kind":"response","parts":[{"part_kind":"text","content":"Colder."}]}],"latency_ms":812.5,"usage":{"input_tokens":31,"output_tokens":4}}`
		steps := []struct {
			c    call
			code int
			want string
		}{
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: done}, 200, `"recorded":true`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"call_id":"nope","latency_ms":1}`}, 400, `"field":"call_id"`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"call_id":"a/b"}`}, 400, `"field":"call_id"`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"latency_ms":-1}`}, 400, `"field":"latency_ms"`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"model":"a\u0000b"}`}, 400, `"field":"model"`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"colour":"red"}`}, 400, `unknown field`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"history":[{"role":"wizard","content":"x"}]}`}, 400, `role`},
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "bob", body: done}, 404, `not_found`},
			// A call of a Go SDK loop: no load recorded it.
			{call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: `{"agent_name":"go","prompt":"p","history":[{"role":"user","content":"Weather in Oslo?"}],` +
				`"request":{"model":"gpt-x","messages":[{"role":"user","content":"Weather in Oslo?"}]},"latency_ms":3}`}, 201, `"call_id":"`},
		}
		for i, s := range steps {
			code, body, _ := do(t, api, s.c)
			if code != s.code || !strings.Contains(body, s.want) {
				t.Fatalf("step %d: %d %s; want %d with %q", i, code, body, s.code, s.want)
			}
		}
		f, err := audit.Read(dir, sessionUUID(t, api, "alice", "au"))
		if err != nil || len(f.Invocations) != 2 {
			t.Fatalf("dump: %v %+v", err, f)
		}
		inv := f.Invocations[0]
		for k, want := range map[string]any{"call_id": id, "agent_name": "weather", "prompt": "And tomorrow?", "system_prompt": "Be brief",
			"raw_history_count": 2, "model": "gpt-x", "latency_ms": 812.5} {
			if got := inv[k]; got != want {
				t.Errorf("%s = %#v, want %#v", k, got, want)
			}
		}
		j, _ := json.Marshal([]any{inv["model_settings"], inv["tools"], inv["answer"], inv["usage"]})
		if want := `[{"temperature":0.2},[{"name":"weather"}],[{"kind":"response","parts":[{"content":"Colder.","part_kind":"text"}]}],{"input_tokens":31,"output_tokens":4}]`; string(j) != want {
			t.Errorf("exchange:\n%s\nwant\n%s", j, want)
		}
		if g := f.Invocations[1]; g["agent_name"] != "go" || g["raw_history_count"] != 1 || g["latency_ms"] != 3.0 || g["call_id"] == "" {
			t.Errorf("appended: %#v", g)
		}
		// Auditing off: said, nothing written.
		off := newAPI(t, db, Options{})
		if code, body, _ := do(t, off, call{method: "POST", path: "/v1/sessions/au/audit", user: "alice", body: done}); code != 200 || !strings.Contains(body, `"recorded":false`) {
			t.Errorf("audit off: %d %s", code, body)
		}
	})
}

// The middleware records each request's call when auditing is on: the
// history given, the pydantic-ai messages sent (system prompt first), what
// the handler recorded, its time, and what it added with RecordCall.
func TestMiddlewareRecordsTheCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mem, _ := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice"})
	_, _ = mem.Store(context.Background(), "mwa", []models.HistoryMessage{{Role: "user", Content: "earlier"}, {Role: "assistant", Content: "before"}}, sessionstore.StoreOptions{})
	on := true
	h := Middleware(MiddlewareOptions{
		Store:        func(*http.Request) (*sessionstore.Store, error) { return mem, nil },
		SystemPrompt: "You are a test.", AgentName: "mw-agent", Audit: &on, AuditDir: dir,
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		turn, _ := TurnFrom(r.Context())
		turn.RecordCall(audit.Exchange{Model: "m-1", Tools: json.RawMessage(`[{"name":"weather"}]`), ModelSettings: json.RawMessage(`{"temperature":0}`)})
		turn.Record(models.HistoryMessage{Role: "user", Content: "now"}, models.HistoryMessage{Role: "assistant", Content: "answer",
			Extra: []models.Field{{Key: "usage", Value: json.RawMessage(`{"input_tokens":9,"output_tokens":1}`)}}})
		w.WriteHeader(204)
	}))
	r := httptest.NewRequest("POST", "/agent", nil)
	r.Header.Set("X-Session-Id", "mwa")
	h.ServeHTTP(httptest.NewRecorder(), r)
	sid, _ := mem.ResolveID(context.Background(), "mwa")
	f, err := audit.Read(dir, sid.String())
	if err != nil || len(f.Invocations) != 1 {
		t.Fatalf("dump: %v %+v", err, f)
	}
	inv := f.Invocations[0]
	if inv["agent_name"] != "mw-agent" || inv["prompt"] != "now" || inv["raw_history_count"] != 2 || inv["pydantic_messages_count"] != 3 ||
		inv["system_prompt"] != "You are a test." || inv["model"] != "m-1" {
		t.Errorf("invocation: %#v", inv)
	}
	req, _ := json.Marshal(inv["request"])
	if !strings.Contains(string(req), `"part_kind":"system-prompt"`) || !strings.Contains(string(req), `"content":"earlier"`) {
		t.Errorf("request %s", req)
	}
	ans, _ := json.Marshal(inv["answer"])
	use, _ := json.Marshal(inv["usage"])
	if !strings.Contains(string(ans), `"content":"answer"`) || string(use) != `{"input_tokens":9,"output_tokens":1}` || inv["tools"] == nil || inv["model_settings"] == nil {
		t.Errorf("answer %s usage %s tools %v settings %v", ans, use, inv["tools"], inv["model_settings"])
	}
	if ms, ok := inv["latency_ms"].(float64); !ok || ms < 0 {
		t.Errorf("latency_ms %v", inv["latency_ms"])
	}
	// Its time is the request's, in UTC (it was 0001-01-01T00:00:00+00:00).
	ts, _ := inv["timestamp"].(string)
	if at, err := models.ParseTimestamp(ts); err != nil || !strings.HasSuffix(ts, "+00:00") || time.Since(at) > time.Minute || time.Since(at) < 0 {
		t.Errorf("timestamp %q, want the time of the request in UTC", ts)
	}
}

// A call appended through the API is stamped with the server's time, in
// UTC, when the caller gives none (issue 54: every such invocation said
// 0001-01-01T00:00:00+00:00, and the call page and waterfall with it); a
// time the caller gives is kept, in UTC to the microsecond as the dump
// writes every time. A bad time, or one given to complete a load's call
// (which keeps the load's time), is a 400 naming the field.
func TestAuditAppendTime(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		dir := t.TempDir()
		api := newAPI(t, db, Options{AuditEnabled: true, AuditDir: dir})
		code, body, _ := do(t, api, call{method: "POST", path: "/v1/sessions/at/messages", user: "alice",
			body: `[{"role":"user","content":"hi"}]`})
		var stored struct {
			SessionID string `json:"session_id"`
		}
		if code != 201 || json.Unmarshal([]byte(body), &stored) != nil {
			t.Fatalf("store: %d %s", code, body)
		}
		const now = "now" // the server's time is wanted
		for _, c := range []struct {
			name, timestamp string // timestamp: the JSON value sent, "" = none
			code            int
			want            string // the time read back, or the error's field
		}{
			{"none", "", 201, now},
			{"null", `null`, 201, now},
			{"Go's zero time", `"0001-01-01T00:00:00Z"`, 201, now},
			{"UTC with microseconds", `"2024-01-15T10:30:00.123456+00:00"`, 201, "2024-01-15T10:30:00.123456+00:00"},
			{"Z", `"2024-01-15T10:30:00Z"`, 201, "2024-01-15T10:30:00+00:00"},
			{"another offset", `"2024-01-15T12:30:00.5+02:00"`, 201, "2024-01-15T10:30:00.500000+00:00"},
			{"naive, read as UTC", `"2024-01-15T10:30:00"`, 201, "2024-01-15T10:30:00+00:00"},
			{"not a time", `"yesterday"`, 400, `"field":"timestamp"`},
			{"not a string", `1705314600`, 400, `timestamp`},
		} {
			t.Run(c.name, func(t *testing.T) {
				body := `{"agent_name":"` + c.name + `","prompt":"p"`
				if c.timestamp != "" {
					body += `,"timestamp":` + c.timestamp
				}
				before := time.Now().UTC()
				code, answer, _ := do(t, api, call{method: "POST", path: "/v1/sessions/at/audit", user: "alice", body: body + "}"})
				after := time.Now().UTC()
				if code != c.code {
					t.Fatalf("%s: %d %s; want %d", body, code, answer, c.code)
				}
				if code != 201 {
					if !strings.Contains(answer, c.want) {
						t.Errorf("%s: %s; want %q", body, answer, c.want)
					}
					return
				}
				f, err := audit.Read(dir, stored.SessionID) // the dump is named by the session's UUID
				if err != nil {
					t.Fatal(err)
				}
				var got string
				for _, inv := range f.Invocations {
					if inv["agent_name"] == c.name {
						got, _ = inv["timestamp"].(string)
					}
				}
				if c.want != now {
					if got != c.want {
						t.Errorf("%s: timestamp %q, want %q kept", body, got, c.want)
					}
					return
				}
				at, err := models.ParseTimestamp(got)
				if err != nil || !strings.HasSuffix(got, "+00:00") ||
					at.Before(before.Truncate(time.Microsecond)) || at.After(after.Add(time.Second)) {
					t.Errorf("%s: timestamp %q, want the server's time in UTC, from %s to %s", body, got, before, after)
				}
			})
		}
		// Completing a load's call keeps the load's time: a time given
		// with call_id alone is refused, not dropped in silence.
		_, _, h := do(t, api, call{method: "GET", path: "/v1/sessions/at/messages?format=pydantic-ai&prompt=q", user: "alice"})
		id := h.Get(AuditCallHeader)
		code, answer, _ := do(t, api, call{method: "POST", path: "/v1/sessions/at/audit", user: "alice",
			body: `{"call_id":"` + id + `","latency_ms":2,"timestamp":"2024-01-15T10:30:00Z"}`})
		if id == "" || code != 400 || !strings.Contains(answer, `"field":"timestamp"`) {
			t.Errorf("completing call %q with a time: %d %s; want 400 naming timestamp", id, code, answer)
		}
	})
}

// sessionUUID is the id of user's session name, as GET /v1/sessions/{name}
// says it: what its audit dump is named by.
func sessionUUID(t *testing.T, api http.Handler, user, name string) string {
	t.Helper()
	code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions/" + name, user: user})
	var got struct{ Session struct{ ID string } }
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.Session.ID == "" {
		t.Fatalf("session %q of %s: %d %s", name, user, code, body)
	}
	return got.Session.ID
}

package remopenai_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
)

// The record of a call is the call (issue 41): a Go agent on openai-go whose
// HTTP client goes through sdk.Transport, run by sdk.RunTurn with auditing
// on, leaves one invocation per model call whose request is, field for
// field, the body the model API received (model, messages, tools), whose
// answer is the body it sent back, with the latency, the model and the
// usage beside; through the library and through serve alike.
func TestChatCallsAreRecordedAsSent(t *testing.T) {
	for _, via := range []string{"library", "serve"} {
		t.Run(via, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("DEBUG_AUDIT_SESSION", "1")
			t.Setenv("DEBUG_AUDIT_DIR", dir)
			rec := &fakellm.Recorder{}
			srv := httptest.NewServer(fakellm.OpenAI(rec))
			t.Cleanup(srv.Close)
			llm := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0),
				option.WithHTTPClient(&http.Client{Transport: sdk.Transport(nil)}))
			db := dbtest.NewSQLite(t)
			var st sdk.Store
			if via == "library" {
				s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
				if err != nil {
					t.Fatal(err)
				}
				st = remstore.Library(s)
			} else {
				st = agenttest.NewServeClient(t, db, 0, func(o *httpapi.Options) { o.AuditEnabled, o.AuditDir = true, dir }).Agent()
			}
			tool := func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
				return sdk.ToolResult(c, fakellm.RunTool(c.Name, c.Arguments)), nil
			}
			for _, p := range fakellm.Prompts {
				if _, err := sdk.RunTurn(context.Background(), st, agenttest.Session, p, chatAsk(llm), tool); err != nil {
					t.Fatal(err)
				}
			}
			sent := rec.Bodies()
			// The dump is named by the session's UUID, not by its name.
			alice, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			sid, err := alice.ResolveID(context.Background(), agenttest.Session)
			if err != nil {
				t.Fatal(err)
			}
			f, err := audit.Read(dir, sid.String())
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Invocations) != len(sent) || len(sent) < 4 {
				t.Fatalf("%d invocations for %d model calls", len(f.Invocations), len(sent))
			}
			for i, inv := range f.Invocations {
				if got, want := canon(t, inv["request"]), canon(t, json.RawMessage(sent[i])); got != want {
					t.Errorf("call %d: recorded request\n%s\nthe model API received\n%s", i, got, want)
				}
				var body map[string]any
				_ = json.Unmarshal(sent[i], &body)
				if got, want := canon(t, inv["tools"]), canon(t, body["tools"]); got != want || got == "null" {
					t.Errorf("call %d: tools %s, sent %s", i, got, want)
				}
				ans, _ := inv["answer"].(map[string]any)
				if inv["model"] != ans["model"] || inv["model"] == nil || ans["object"] != "chat.completion" || inv["usage"] == nil || inv["call_id"] == "" {
					t.Errorf("call %d: model %v, answer %v, usage %v", i, inv["model"], inv["answer"], inv["usage"])
				}
				if ms, ok := inv["latency_ms"].(float64); !ok || ms <= 0 {
					t.Errorf("call %d: latency_ms %v", i, inv["latency_ms"])
				}
			}
		})
	}
}

// canon is v as compact JSON with sorted keys.
func canon(t *testing.T, v any) string {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// A call sent to serve's audit dump keeps the time the caller gives and
// gets serve's without one (issue 54: the dump said 0001-01-01, the zero
// time, for every call the Go client sent); completing a load's call
// through the agent store keeps the load's time rather than being refused
// for sending one.
func TestRecordCallTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	c := agenttest.NewServeClient(t, dbtest.NewSQLite(t), 0, func(o *httpapi.Options) { o.AuditEnabled, o.AuditDir = true, dir })
	res, err := c.Store(ctx, "rt", []models.HistoryMessage{{Role: models.RoleUser, Content: "hi"}}, client.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID // the dump is named by the session's UUID
	given := time.Date(2024, 1, 15, 10, 30, 0, 250000000, time.UTC)
	for _, r := range []struct {
		name string
		at   time.Time
		want string // "" = serve's time
	}{
		{"given", given, "2024-01-15T10:30:00.250000+00:00"},
		{"none", time.Time{}, ""},
	} {
		before := time.Now()
		if ok, err := c.RecordCall(ctx, "rt", client.AuditRecord{AgentName: r.name, Timestamp: r.at}); err != nil || !ok {
			t.Fatalf("%s: recorded %v, %v", r.name, ok, err)
		}
		got := invocationTime(t, dir, sid.String(), "agent_name", r.name)
		if r.want != "" && got != r.want {
			t.Errorf("%s: timestamp %q, want %q", r.name, got, r.want)
		}
		if at, err := models.ParseTimestamp(got); r.want == "" && (err != nil || at.Before(before.Truncate(time.Microsecond)) || at.After(time.Now())) {
			t.Errorf("%s: timestamp %q, want serve's time", r.name, got)
		}
	}
	var id string
	if _, err := c.LoadPydanticAI(ctx, "rt", client.PydanticAIOptions{Prompt: "p", OnAuditCall: func(s string) { id = s }}); err != nil || id == "" {
		t.Fatalf("audited load: call %q, %v", id, err)
	}
	loaded := invocationTime(t, dir, sid.String(), "call_id", id)
	rec, ok := c.Agent().(sdk.Recorder)
	if !ok {
		t.Fatal("the agent store is not an sdk.Recorder")
	}
	ms := 5.0
	if err := rec.RecordCall(ctx, "rt", sdk.CallRecord{Timestamp: given, Exchange: audit.Exchange{CallID: id, LatencyMS: &ms}}); err != nil {
		t.Fatalf("completing the load's call: %v", err)
	}
	if got := invocationTime(t, dir, sid.String(), "call_id", id); got != loaded {
		t.Errorf("completed call's time %q, want the load's %q", got, loaded)
	}
}

// invocationTime is the timestamp of the session's invocation whose key is v.
func invocationTime(t *testing.T, dir, sid, key, v string) string {
	t.Helper()
	f, err := audit.Read(dir, sid)
	if err != nil {
		t.Fatal(err)
	}
	for _, inv := range f.Invocations {
		if inv[key] == v {
			s, _ := inv["timestamp"].(string)
			return s
		}
	}
	t.Fatalf("no invocation with %s %q", key, v)
	return ""
}

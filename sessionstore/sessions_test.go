package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// backend makes stores for one tenant after another on the same data: one
// per database driver, so every test below runs on each.
type backend struct {
	name string
	// open returns a maker of stores on fresh data (clock may be nil) and
	// the database.
	open func(t *testing.T, clock func() time.Time) (func(user string) *sessionstore.Store, *repository.DB)
}

var backends = func() []backend {
	var out []backend
	for _, d := range dbtest.Dialects {
		out = append(out, backend{d.Name, dbBackend(d.New)})
	}
	return out
}()

// Every database the store has a driver for is in the shared suite: a new
// driver without a dbtest dialect fails here.
func dbBackend(newDB func(testing.TB) *repository.DB) func(*testing.T, func() time.Time) (func(string) *sessionstore.Store, *repository.DB) {
	return func(t *testing.T, clock func() time.Time) (func(string) *sessionstore.Store, *repository.DB) {
		db := newDB(t)
		return func(user string) *sessionstore.Store {
			s, err := sessionstore.New(db, sessionstore.Options{UserID: user, TruncateLength: 10, Now: clock})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, db
	}
}

// each runs fn on every backend; on the database backends a session the peer
// wrote is checked to load unchanged after fn.
func each(t *testing.T, fn func(t *testing.T, mk func(string) *sessionstore.Store)) {
	t.Helper()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, db := b.open(t, nil)
			var peerSID uuid.UUID
			var before []models.HistoryMessage
			{
				peerSID = uuid.New()
				base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
				_, err := dbtest.PeerStore(context.Background(), db, peerSID, "A", []dbtest.PeerMessage{
					{Role: "user", Content: "peer question"}, {Role: "assistant", Content: strings.Repeat("peer answer ", 5)},
					{Role: "tool", Content: `{"r":1}`, ToolCallID: "c", ToolName: "t"}},
					func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) })
				if err != nil {
					t.Fatal(err)
				}
				before, _ = mk("A").Load(context.Background(), peerSID.String(), sessionstore.LoadOptions{})
			}
			fn(t, mk)
			{
				after, err := mk("A").Load(context.Background(), peerSID.String(), sessionstore.LoadOptions{})
				if err != nil || historyJSON(t, after) != historyJSON(t, before) || len(after) != 3 {
					t.Fatalf("the peer's session changed: %v\n%v\n%v", err, before, after)
				}
			}
		})
	}
}

var ctx = context.Background()

func store(t *testing.T, s *sessionstore.Store, key string, msgs ...models.HistoryMessage) sessionstore.StoreResult {
	t.Helper()
	res, err := s.Store(ctx, key, msgs, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLifecycle(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		store(t, s, "life", msg("user", "hi"))
		if _, err := s.SetStatus(ctx, "life", "completed", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store(ctx, "life", []models.HistoryMessage{msg("user", "more")}, sessionstore.StoreOptions{}); !errors.Is(err, sessionstore.ErrSessionNotActive) {
			t.Fatalf("store into a completed session: %v", err)
		}
		if _, err := s.SetStatus(ctx, "life", "active", ""); err != nil {
			t.Fatalf("reopen: %v", err)
		}
		info, err := s.SetStatus(ctx, "life", "cancelled", "user pressed stop")
		if err != nil || info.Status != "cancelled" || info.Metadata["reason"] != "user pressed stop" {
			t.Fatalf("cancel: %+v %v", info, err)
		}
		h, _ := s.Load(ctx, "life", sessionstore.LoadOptions{})
		if last := h[len(h)-1]; last.Role != "system" || !strings.Contains(last.Content, "user pressed stop") {
			t.Fatalf("reason not recorded as a system message: %+v", h)
		}
		for _, to := range []string{"active", "completed", "error"} {
			if _, err := s.SetStatus(ctx, "life", to, ""); !errors.Is(err, sessionstore.ErrInvalidTransition) {
				t.Errorf("cancelled -> %s: %v", to, err)
			}
		}
		// An unknown status is bad input, not a refused transition.
		if _, err := s.SetStatus(ctx, "life", "bogus", ""); err == nil {
			t.Error("status bogus accepted")
		} else if fe, ok := models.AsFieldError(err); !ok || fe.Field != "status" {
			t.Errorf("status bogus: %v, want a field error on status", err)
		}
		// An update is atomic: a refused transition changes nothing else.
		name, agent := "SHOULD-NOT-STICK", "SHOULD-NOT-STICK"
		active := "active"
		if _, err := s.UpdateSession(ctx, "life", sessionstore.SessionUpdate{Name: &name, AgentName: &agent,
			Settings: map[string]any{"model": "changed"}, Status: &active}); !errors.Is(err, sessionstore.ErrInvalidTransition) {
			t.Fatalf("update with a refused transition: %v", err)
		}
		if info, _, _ := s.GetSession(ctx, "life", sessionstore.LoadOptions{}); info.Name == name || info.AgentName == agent || info.Settings["model"] != nil {
			t.Fatalf("a refused update changed the session: %+v", info)
		}
		store(t, s, "fail", msg("user", "x"))
		if info, err := s.SetStatus(ctx, "fail", "error", "model crashed"); err != nil || info.Status != "error" {
			t.Fatalf("error: %v", err)
		}
		if _, err := mk("B").SetStatus(ctx, "fail", "completed", ""); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("other tenant changed the status: %v", err)
		}
		if _, _, err := s.GetSession(ctx, "nope", sessionstore.LoadOptions{}); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("unknown session: %v", err)
		}
	})
}

func TestListing(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		statuses := []string{"active", "completed", "error"}
		for i := range 25 {
			key := fmt.Sprintf("list-%02d", i)
			store(t, s, key, msg("user", "x"))
			agent := []string{"planner", "booker"}[i%2]
			if _, err := s.UpdateSession(ctx, key, sessionstore.SessionUpdate{AgentName: &agent}); err != nil {
				t.Fatal(err)
			}
			if st := statuses[i%3]; st != "active" {
				if _, err := s.SetStatus(ctx, key, st, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
		store(t, mk("B"), "b-only", msg("user", "y"))
		page, err := s.ListSessions(ctx, sessionstore.ListOptions{})
		if err != nil || len(page.Sessions) != 20 || page.Total < 25 || page.NextCursor == "" {
			t.Fatalf("first page: %d of %d, %v", len(page.Sessions), page.Total, err)
		}
		seen := map[string]bool{}
		cur := ""
		for {
			p, err := s.ListSessions(ctx, sessionstore.ListOptions{Limit: 7, Cursor: cur})
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range p.Sessions {
				if seen[x.Name] || x.Name == "b-only" {
					t.Fatalf("%s twice or another tenant's", x.Name)
				}
				seen[x.Name] = true
				if i > 0 && x.CreatedAt.After(p.Sessions[i-1].CreatedAt) {
					t.Fatal("not newest first")
				}
			}
			if cur = p.NextCursor; cur == "" {
				break
			}
		}
		if len(seen) != page.Total {
			t.Fatalf("paged through %d of %d", len(seen), page.Total)
		}
		p, _ := s.ListSessions(ctx, sessionstore.ListOptions{Statuses: []string{"active", "error"}, AgentName: "planner", Limit: 500})
		for _, x := range p.Sessions {
			if x.AgentName != "planner" || x.Status == "completed" {
				t.Fatalf("filter leaked %+v", x)
			}
		}
		if p.Total != 9 { // even i (planner) with i%3 != 1
			t.Fatalf("filtered total %d, want 9", p.Total)
		}
		// The agent filter ignores case.
		if p, _ := s.ListSessions(ctx, sessionstore.ListOptions{Statuses: []string{"active", "error"}, AgentName: "PLANNER", Limit: 500}); p.Total != 9 {
			t.Fatalf("agent PLANNER: total %d, want 9", p.Total)
		}
		mid := page.Sessions[10].CreatedAt
		p, _ = s.ListSessions(ctx, sessionstore.ListOptions{CreatedBefore: mid, Limit: 500})
		for _, x := range p.Sessions {
			if !x.CreatedAt.Before(mid) {
				t.Fatal("created_before leaked")
			}
		}
		for _, bad := range []sessionstore.ListOptions{{Limit: 501}, {Limit: -1}, {Statuses: []string{"weird"}}, {Cursor: "!!"}} {
			if _, err := s.ListSessions(ctx, bad); err == nil {
				t.Errorf("%+v accepted", bad)
			}
		}
		// A NUL byte or invalid UTF-8 in a filter is bad input naming the
		// filter (it was a storage error, 503, on PostgreSQL).
		for _, c := range []struct {
			o     sessionstore.ListOptions
			field string
		}{{sessionstore.ListOptions{UserID: "a\x00b"}, "owner"}, {sessionstore.ListOptions{AgentName: "x\x00"}, "agent"},
			{sessionstore.ListOptions{AgentName: "\xff"}, "agent"}} {
			_, err := s.ListSessions(ctx, c.o)
			if fe, ok := models.AsFieldError(err); !ok || fe.Field != c.field {
				t.Errorf("%+v: %v, want bad input naming %q", c.o, err, c.field)
			}
		}
	})
}

func TestSettingsAndDelete(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		res := store(t, s, "set", msg("user", "hi"), msg("assistant", strings.Repeat("long ", 10)))
		agent := "planner"
		if _, err := s.UpdateSession(ctx, "set", sessionstore.SessionUpdate{AgentName: &agent, Settings: map[string]any{"model": "gpt-4o", "thinking_level": "high", "temperature": 0.2}}); err != nil {
			t.Fatal(err)
		}
		info, err := s.UpdateSession(ctx, "set", sessionstore.SessionUpdate{Settings: map[string]any{"thinking_level": nil, "max_tokens": 512}})
		if err != nil {
			t.Fatal(err)
		}
		info, h, err := s.GetSession(ctx, "set", sessionstore.LoadOptions{})
		if err != nil || len(h) != 2 || info.AgentName != "planner" || info.Settings["model"] != "gpt-4o" ||
			info.Settings["thinking_level"] != nil || fmt.Sprint(info.Settings["max_tokens"]) != "512" || fmt.Sprint(info.Settings["temperature"]) != "0.2" {
			t.Fatalf("settings %+v %v", info, err)
		}
		if err := s.DeleteSession(ctx, "set", sessionstore.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.GetSession(ctx, "set", sessionstore.LoadOptions{}); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("soft-deleted session still there: %v", err)
		}
		if h, _ := s.Load(ctx, "set", sessionstore.LoadOptions{}); len(h) != 0 {
			t.Fatal("soft-deleted messages still load")
		}
		if _, err := s.Lookup(ctx, res.Keys[1]); !errors.Is(err, repository.ErrNotFound) {
			t.Fatal("soft-deleted message still looked up")
		}
		// A soft-deleted session can still be purged; then no row is left.
		if err := s.DeleteSession(ctx, "set", sessionstore.DeleteOptions{Purge: true}); err != nil {
			t.Fatalf("purge after soft delete: %v", err)
		}
		if err := s.DeleteSession(ctx, "set", sessionstore.DeleteOptions{Purge: true}); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("purge of a purged session: %v", err)
		}
		// Positions count soft-deleted rows (SPEC §4): only if none is left
		// does the next message of "set" start again at position 0.
		if again := store(t, s, "set", msg("user", "again")); !strings.HasSuffix(again.Keys[0], "-msg-0") {
			t.Fatalf("purge after soft delete left rows: the next key is %s", again.Keys[0])
		}
		store(t, s, "purge", msg("user", "a"))
		store(t, mk("B"), "purge", msg("user", "b"))
		if err := s.DeleteSession(ctx, "purge", sessionstore.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
		if h, _ := mk("B").Load(ctx, "purge", sessionstore.LoadOptions{}); len(h) != 1 {
			t.Fatal("purge removed another tenant's messages")
		}
		if h, _ := s.Load(ctx, "purge", sessionstore.LoadOptions{IgnoreCompaction: true}); len(h) != 0 {
			t.Fatal("purge left messages")
		}
		if err := s.DeleteSession(ctx, "never", sessionstore.DeleteOptions{Purge: true}); !errors.Is(err, repository.ErrNotFound) {
			t.Fatalf("delete unknown: %v", err)
		}
	})
}

func TestExpire(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			mk, _ := b.open(t, clock)
			s := mk("A")
			store(t, s, "old-1", msg("user", "x"))
			store(t, s, "old-2", msg("user", "x"))
			mu.Lock()
			now = now.Add(50 * time.Minute)
			mu.Unlock()
			store(t, s, "fresh", msg("user", "x"))
			at := now.Add(5 * time.Minute)
			got, err := s.Expire(ctx, sessionstore.ExpireOptions{Idle: 30 * time.Minute, DryRun: true, Now: at})
			if err != nil || len(got) != 2 {
				t.Fatalf("dry run: %d %v", len(got), err)
			}
			if info, _, _ := s.GetSession(ctx, "old-1", sessionstore.LoadOptions{}); info.Status != "active" {
				t.Fatal("dry run changed a session")
			}
			if got, _ = s.Expire(ctx, sessionstore.ExpireOptions{Idle: 30 * time.Minute, Now: at}); len(got) != 2 {
				t.Fatalf("expired %d", len(got))
			}
			info, _, _ := s.GetSession(ctx, "old-1", sessionstore.LoadOptions{})
			if info.Status != "completed" || info.Metadata["reason"] != "idle_timeout" {
				t.Fatalf("expired session %+v", info)
			}
			if info, _, _ := s.GetSession(ctx, "fresh", sessionstore.LoadOptions{}); info.Status != "active" {
				t.Fatal("fresh session expired")
			}
			if got, _ := s.Expire(ctx, sessionstore.ExpireOptions{Idle: time.Minute, Purge: true, Now: at.Add(time.Hour)}); len(got) != 1 {
				t.Fatalf("purge expired %d", len(got))
			}
			if _, _, err := s.GetSession(ctx, "fresh", sessionstore.LoadOptions{}); !errors.Is(err, repository.ErrNotFound) {
				t.Fatalf("purged session: %v", err)
			}
		})
	}
}

func TestFork(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		long := func(c string) string { return strings.Repeat(c, 30) }
		store(t, s, "orig", msg("user", "q1"), msg("assistant", long("a")), msg("user", "q2"), msg("assistant", long("b")))
		info, err := s.Fork(ctx, "orig", sessionstore.ForkOptions{UpTo: 2, NewSessionKey: "branch"})
		if err != nil {
			t.Fatal(err)
		}
		origID, _ := s.SessionUUID("orig")
		ff, _ := info.Metadata["forked_from"].(map[string]any)
		if info.Name != "branch" || ff["session_id"] != origID.String() || fmt.Sprint(ff["up_to"]) != "2" {
			t.Fatalf("fork info %+v", info)
		}
		h, _ := s.Load(ctx, "branch", sessionstore.LoadOptions{})
		if len(h) != 2 || !h[1].Compressed {
			t.Fatalf("fork history %+v", h)
		}
		bid, _ := s.SessionUUID("branch")
		if h[1].EntityKey != fmt.Sprintf("session-%s-msg-1", bid) {
			t.Fatalf("fork key %s", h[1].EntityKey)
		}
		if full, err := s.Lookup(ctx, h[1].EntityKey); err != nil || full != long("a") {
			t.Fatalf("fork key lookup %q %v", full, err)
		}
		store(t, s, "branch", msg("user", "diverge"))
		if o, _ := s.Load(ctx, "orig", sessionstore.LoadOptions{}); len(o) != 4 {
			t.Fatal("original changed")
		}
		if _, err := s.Fork(ctx, "orig", sessionstore.ForkOptions{NewSessionKey: "branch"}); err == nil {
			t.Fatal("fork onto an existing session accepted")
		}
		all, err := s.Fork(ctx, "orig", sessionstore.ForkOptions{})
		if h, _ := s.Load(ctx, all.ID.String(), sessionstore.LoadOptions{}); err != nil || len(h) != 4 {
			t.Fatalf("fork all: %d %v", len(h), err)
		}
	})
}

func TestTypedMessagesAndUsage(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		asst := msg("assistant", "calling")
		asst.Extra = []models.Field{
			{Key: "author", Value: []byte(`"planner-agent"`)},
			{Key: "usage", Value: []byte(`{"input_tokens":100,"output_tokens":20}`)},
			{Key: "model", Value: []byte(`"gpt-4o"`)},
			{Key: "reasoning", Value: []byte(`[{"provider":"anthropic","item":{"type":"thinking","thinking":"hm","signature":"s1"}}]`)},
		}
		asst.ToolCalls = []models.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q":"x"}`}}
		tool := models.HistoryMessage{Role: "tool", Content: `{"hits":3}`, ToolCallID: "c1", ToolName: "search", ToolArguments: []byte(`{"q":"x"}`)}
		second := msg("assistant", "done")
		second.Extra = []models.Field{{Key: "usage", Value: []byte(`{"input_tokens":150,"output_tokens":30,"total_tokens":181}`)}}
		store(t, s, "typed", msg("user", "find x"), asst, tool, second)
		// A plain load has the peer's keys only (SPEC §1); Extras asks for more.
		plain, _ := s.Load(ctx, "typed", sessionstore.LoadOptions{})
		if got, _ := plain[1].MarshalJSON(); strings.Contains(string(got), "author") || strings.Contains(string(got), "usage") {
			t.Fatalf("plain load carries extras: %s", got)
		}
		h, _ := s.Load(ctx, "typed", sessionstore.LoadOptions{Extras: true})
		got, _ := h[1].MarshalJSON()
		want := `"tool_calls":[{"id":"c1","name":"search","arguments":"{\"q\":\"x\"}"}],"author":"planner-agent","model":"gpt-4o",`
		if !strings.Contains(string(got), want) || !strings.Contains(string(got), `"usage":{"input_tokens":100,"output_tokens":20}`) {
			t.Fatalf("assistant round trip:\n%s\nwant ...%s", got, want)
		}
		// An item is opaque JSON: JSONB may order its keys.
		if r, _ := h[1].ExtraRaw("reasoning"); !dbtest.JSONEqual(t, r, []byte(`[{"provider":"anthropic","item":{"type":"thinking","thinking":"hm","signature":"s1"}}]`)) {
			t.Fatalf("reasoning %s", r)
		}
		if h[2].ToolCallID != "c1" || string(h[2].ToolArguments) != `{"q":"x"}` || h[2].Content != `{"hits":3}` {
			t.Fatalf("tool round trip %+v", h[2])
		}
		u, err := s.SessionUsage(ctx, "typed")
		if err != nil || u != (sessionstore.Usage{InputTokens: 250, OutputTokens: 50, TotalTokens: 301, Turns: 2}) {
			t.Fatalf("usage %+v %v", u, err)
		}
		for _, f := range []models.Field{{Key: "usage", Value: []byte(`5`)}, {Key: "reasoning", Value: []byte(`[{"item":1}]`)},
			{Key: "reasoning", Value: []byte(`{"provider":"x","item":1}`)}, {Key: "reasoning", Value: []byte(`[{"provider":"x","item":1,"extra":2}]`)}} {
			bad := msg("assistant", "x")
			bad.Extra = []models.Field{f}
			if _, err := s.Store(ctx, "typed", []models.HistoryMessage{bad}, sessionstore.StoreOptions{}); err == nil {
				t.Fatalf("%s %s accepted", f.Key, f.Value)
			}
		}
	})
}

func TestCompaction(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		long := strings.Repeat("detail ", 10)
		res := store(t, s, "compact",
			msg("user", "q1"), msg("assistant", long+"1"), msg("user", "q2"),
			msg("assistant", "calling"), // the last three: the cut moves back here
			models.HistoryMessage{Role: "tool", Content: `{"a":1}`, ToolCallID: "t1", ToolName: "x"},
			models.HistoryMessage{Role: "tool", Content: `{"b":2}`, ToolCallID: "t2", ToolName: "x"},
			msg("assistant", "final"))
		before, _ := s.Load(ctx, "compact", sessionstore.LoadOptions{})
		sum, err := s.Compact(ctx, "compact", sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sum.Content, "Summary of 3 earlier messages:") {
			t.Fatalf("summary %q", sum.Content)
		}
		h, _ := s.Load(ctx, "compact", sessionstore.LoadOptions{NoCompress: true})
		var roles []string
		for _, m := range h {
			roles = append(roles, string(m.Role))
		}
		if strings.Join(roles, ",") != "assistant,assistant,tool,tool,assistant" || h[0].Content != sum.Content || h[1].Content != "calling" {
			t.Fatalf("after compaction: %v", roles)
		}
		for i, m := range before { // every earlier message stays recoverable
			if m.Compressed {
				if full, err := s.Lookup(ctx, m.EntityKey); err != nil || !strings.HasPrefix(full, "detail") {
					t.Fatalf("message %d lost: %v", i, err)
				}
			}
		}
		if full, err := s.Lookup(ctx, res.Keys[1]); err != nil || full != long+"1" {
			t.Fatal("covered message not recoverable")
		}
		if all, _ := s.Load(ctx, "compact", sessionstore.LoadOptions{IgnoreCompaction: true}); len(all) != 8 {
			t.Fatalf("ignore compaction: %d", len(all))
		}
		store(t, s, "compact", msg("user", "after"))
		if _, err := s.Compact(ctx, "compact", sessionstore.DeterministicSummary, sessionstore.CompactOptions{}); err != nil {
			t.Fatal(err)
		}
		if h, _ := s.Load(ctx, "compact", sessionstore.LoadOptions{NoCompress: true}); len(h) != 1 || !strings.HasPrefix(h[0].Content, "Summary of 6 earlier") {
			t.Fatalf("second compaction: %+v", h)
		}
		if _, err := s.Compact(ctx, "empty", sessionstore.DeterministicSummary, sessionstore.CompactOptions{}); err == nil {
			t.Fatal("compacting nothing accepted")
		}
	})
}

// What a caller holds is a copy: changing it changes nothing stored.
func historyJSON(t *testing.T, h []models.HistoryMessage) string {
	t.Helper()
	var b strings.Builder
	if err := models.EncodeHistory(&b, h); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// loadEachMatches checks that streaming gives exactly what Load gives.
func loadEachMatches(t *testing.T, s *sessionstore.Store, key string, o sessionstore.LoadOptions) {
	t.Helper()
	want, err := s.Load(ctx, key, o)
	if err != nil {
		t.Fatal(err)
	}
	var got []models.HistoryMessage
	if err := s.LoadEach(ctx, key, o, func(m models.HistoryMessage) error { got = append(got, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if historyJSON(t, got) != historyJSON(t, want) {
		t.Fatalf("LoadEach(%s, %+v) differs from Load:\n%s\n%s", key, o, historyJSON(t, got), historyJSON(t, want))
	}
}

func TestLoadEachMatchesLoad(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		long := strings.Repeat("detail ", 10)
		res := store(t, s, "stream", msg("user", "q1"), msg("assistant", long+"1"), msg("user", "q2"), msg("assistant", long+"2"),
			models.HistoryMessage{Role: "tool", Content: `{"a":1}`, ToolCallID: "t1"}, msg("assistant", long+"3"))
		opts := []sessionstore.LoadOptions{{}, {NoCompress: true}, {IgnoreCompaction: true}}
		for _, o := range opts {
			loadEachMatches(t, s, "stream", o)
		}
		if _, err := s.Compact(ctx, "stream", sessionstore.DeterministicSummary, sessionstore.CompactOptions{KeepLast: 2}); err != nil {
			t.Fatal(err)
		}
		store(t, s, "stream", msg("assistant", long+"4"))
		info, _, _ := s.GetSession(ctx, "stream", sessionstore.LoadOptions{})
		_ = info
		for _, o := range append(opts, sessionstore.LoadOptions{Since: time.Now().Add(-time.Hour)}) {
			loadEachMatches(t, s, "stream", o)
		}
		_ = res
		loadEachMatches(t, s, "nothing-here", sessionstore.LoadOptions{})
	})
}

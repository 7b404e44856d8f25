package client_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/remstore/remstore/client"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Every API call through the client against serve in process, on each
// database: typed results, and errors with the API's body and request id.
func TestEveryCall(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		c := agenttest.NewServeClient(t, db, 20)
		if err := c.Ready(ctx); err != nil {
			t.Fatal(err)
		}
		long := strings.Repeat("a long answer, ", 10)
		res, err := c.Store(ctx, "chat/1 é", []models.HistoryMessage{
			{Role: models.RoleUser, Content: "find x"},
			{Role: models.RoleAssistant, Content: "", ToolCalls: []models.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q": "x"}`}}},
			{Role: models.RoleTool, Content: `{"hits":1}`, ToolCallID: "c1", ToolName: "search"},
			{Role: models.RoleAssistant, Content: long},
		}, client.StoreOptions{IdempotencyKey: "idem-1"})
		if err != nil || res.Stored != 4 || len(res.Keys) != 4 {
			t.Fatalf("store: %+v %v", res, err)
		}
		again, err := c.Store(ctx, "chat/1 é", []models.HistoryMessage{{Role: models.RoleUser, Content: "find x"},
			{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c1", Name: "search", Arguments: `{"q": "x"}`}}},
			{Role: models.RoleTool, Content: `{"hits":1}`, ToolCallID: "c1", ToolName: "search"}, {Role: models.RoleAssistant, Content: long}}, client.StoreOptions{IdempotencyKey: "idem-1"})
		if err != nil || again.Stored != 0 {
			t.Fatalf("resend with the same key: %+v %v", again, err)
		}
		h, err := c.Load(ctx, "chat/1 é", client.LoadOptions{Extras: true})
		if err != nil || len(h) != 4 || !h[3].Compressed || len(h[1].ToolCalls) != 1 || h[1].ToolCalls[0].Arguments != `{"q": "x"}` {
			t.Fatalf("load: %+v %v", h, err)
		}
		if full, err := c.Lookup(ctx, "REM LOOKUP "+h[3].EntityKey); err != nil || full != long {
			t.Fatalf("lookup: %q %v", full, err)
		}
		pai, err := c.LoadPydanticAI(ctx, "chat/1 é", client.PydanticAIOptions{SystemPrompt: "Be brief."})
		if err != nil || !strings.Contains(string(pai), `"tool_call_id":"c1"`) || !strings.Contains(string(pai), `"system-prompt"`) {
			t.Fatalf("pydantic-ai load: %s %v", pai, err)
		}
		if r, err := c.StorePydanticAI(ctx, "pai", pai, client.StoreOptions{}); err != nil || r.Stored == 0 {
			t.Fatalf("pydantic-ai store: %+v %v", r, err)
		}
		if hits, err := c.Search(ctx, "answer", client.SearchOptions{}); err != nil || len(hits) == 0 {
			t.Fatalf("search: %v %v", hits, err)
		}
		agent := "planner"
		if s, err := c.UpdateSession(ctx, "chat/1 é", client.SessionUpdate{AgentName: &agent, Settings: map[string]any{"model": "m"}}); err != nil || s.AgentName != "planner" {
			t.Fatalf("update: %+v %v", s, err)
		}
		page, err := c.ListSessions(ctx, client.ListOptions{Agent: "planner"})
		if err != nil || len(page.Sessions) != 1 || page.Sessions[0].Name != "chat/1 é" {
			t.Fatalf("list: %+v %v", page, err)
		}
		got, err := c.GetSession(ctx, "chat/1 é", client.GetOptions{Full: true})
		if err != nil || len(got.Messages) != 4 || got.Messages[3].Content != long {
			t.Fatalf("get: %+v %v", got, err)
		}
		if f, err := c.Fork(ctx, "chat/1 é", client.ForkOptions{UpTo: 2, NewSessionID: "branch"}); err != nil || f.Name != "branch" {
			t.Fatalf("fork: %+v %v", f, err)
		}
		if m, err := c.PopMessage(ctx, "branch"); err != nil || m == nil || len(m.ToolCalls) != 1 {
			t.Fatalf("pop: %+v %v", m, err)
		}
		if n, err := c.ClearMessages(ctx, "branch"); err != nil || n != 1 {
			t.Fatalf("clear: %d %v", n, err)
		}
		if s, err := c.Cancel(ctx, "chat/1 é", "done"); err != nil || s.Status != "cancelled" {
			t.Fatalf("cancel: %+v %v", s, err)
		}
		_, err = c.Store(ctx, "chat/1 é", []models.HistoryMessage{{Role: models.RoleUser, Content: "more"}}, client.StoreOptions{})
		var e *client.Error
		if !errors.Is(err, client.ErrConflict) || !errors.As(err, &e) || e.RequestID == "" {
			t.Fatalf("store into a cancelled session: %v", err)
		}
		if err := c.DeleteSession(ctx, "branch", client.DeleteOptions{Purge: true}); err != nil {
			t.Fatal(err)
		}
		// A message the library would refuse is refused before it is sent.
		_, err = c.Store(ctx, "x", []models.HistoryMessage{{Role: "robot", Content: "hi"}}, client.StoreOptions{})
		if fe, ok := models.AsFieldError(err); !ok || fe.Field != "role" {
			t.Fatalf("bad role: %#v", err)
		}
		// Errors carry the API's body: the field, the code, the request id.
		_, err = c.Lookup(ctx, "not a key")
		if !errors.Is(err, client.ErrBadRequest) || !errors.As(err, &e) || e.Field != "key" || e.RequestID == "" || e.Code == "" {
			t.Fatalf("bad key: %#v", err)
		}
		if _, err := c.Lookup(ctx, "session-00000000-0000-0000-0000-000000000000-msg-1"); !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("unknown key: %v", err)
		}
		if _, err := c.Load(ctx, "nope", client.LoadOptions{}); err != nil && !errors.Is(err, client.ErrNotFound) {
			t.Fatalf("unknown session: %v", err)
		}
	})
}

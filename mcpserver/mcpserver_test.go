package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

func TestTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.NewSQLite(t)
	alice, _ := sessionstore.New(db, sessionstore.Options{UserID: "alice", TruncateLength: 10})
	full := strings.Repeat("the whole answer ", 5)
	_, _ = alice.Store(ctx, "s", []models.HistoryMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: full}}, sessionstore.StoreOptions{})
	h, _ := alice.Load(ctx, "s", sessionstore.LoadOptions{})
	key := h[1].EntityKey

	call := func(st *sessionstore.Store, tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		ct, st2 := mcp.NewInMemoryTransports()
		srv := New(st, "test")
		ss, err := srv.Connect(ctx, st2, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	textOf := func(r *mcp.CallToolResult) string { return r.Content[0].(*mcp.TextContent).Text }

	if r := call(alice, "rem_lookup", map[string]any{"key": "REM LOOKUP " + key}); r.IsError || textOf(r) != full {
		t.Fatalf("rem_lookup: %+v", r)
	}
	bob, _ := sessionstore.New(db, sessionstore.Options{UserID: "bob", TruncateLength: 10})
	if r := call(bob, "rem_lookup", map[string]any{"key": key}); !r.IsError || !strings.Contains(textOf(r), "not found") {
		t.Fatalf("bob read alice's text: %+v", textOf(r))
	}
	// Alice's session by its UUID is, for bob, a session with nothing in it.
	sid, _ := alice.SessionUUID("s")
	for _, k := range []string{"s", sid.String()} {
		if r := call(bob, "session_history", map[string]any{"session_id": k}); r.IsError || strings.TrimSpace(textOf(r)) != "[]" {
			t.Fatalf("bob's history of %s: %s", k, textOf(r))
		}
	}
	if r := call(alice, "session_history", map[string]any{"session_id": "s"}); r.IsError || !strings.Contains(textOf(r), `"_entity_key":"`+key+`"`) {
		t.Fatalf("session_history: %s", textOf(r))
	}
	if r := call(alice, "session_history", map[string]any{"session_id": "s", "compress": false}); !strings.Contains(textOf(r), full) {
		t.Fatalf("uncompressed history: %s", textOf(r))
	}
}

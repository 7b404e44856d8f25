package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

func TestTools(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	alice, _ := repository.NewMemoryStore(repository.StoreOptions{UserID: "alice", TruncateLength: 10})
	full := strings.Repeat("the whole answer ", 5)
	_, _ = alice.StoreMessages(ctx, "s", []models.HistoryMessage{{Role: "user", Content: "q"}, {Role: "assistant", Content: full}}, "")
	h, _ := alice.Load(ctx, "s", repository.LoadOptions{})
	key := h[1].EntityKey

	call := func(st repository.SessionStore, tool string, args map[string]any) *mcp.CallToolResult {
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
	bob, _ := alice.Tenant("bob")
	if r := call(bob, "rem_lookup", map[string]any{"key": key}); !r.IsError || !strings.Contains(textOf(r), "not found") {
		t.Fatalf("bob read alice's text: %+v", textOf(r))
	}
	if r := call(alice, "session_history", map[string]any{"session_id": "s"}); r.IsError || !strings.Contains(textOf(r), `"_entity_key":"`+key+`"`) {
		t.Fatalf("session_history: %s", textOf(r))
	}
	if r := call(alice, "session_history", map[string]any{"session_id": "s", "compress": false}); !strings.Contains(textOf(r), full) {
		t.Fatalf("uncompressed history: %s", textOf(r))
	}
}

package sessionstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// A load without extras reads fewer fields (rowsArgs.plain); every message
// it shows must be what reading every field shows: every role spelling, tool
// fields where the peer and remstore put them and where they do not belong,
// author, usage and tool_calls, long and short answers, rows the peer wrote.
func TestPlainLoadReadsWhatItShows(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		s := newStore(t, db, "A", 5)
		long := strings.Repeat("long answer ", 4)
		var msgs []models.HistoryMessage
		for _, role := range []models.Role{"user", "assistant", "model", "tool", "function", "system"} {
			m := models.HistoryMessage{Role: role, Content: long}
			if role == models.RoleTool { // a store refuses them elsewhere; the peer's rows below have them there
				m.ToolCallID, m.ToolName, m.ToolArguments = "call_"+string(role), "search", []byte(`{"q":"`+string(role)+`"}`)
			}
			msgs = append(msgs, models.HistoryMessage{Role: role, Content: "short"}, m)
		}
		msgs = append(msgs, models.HistoryMessage{Role: "assistant", Content: long, Extra: []models.Field{
			{Key: "author", Value: []byte(`"planner"`)}, {Key: "usage", Value: []byte(`{"input_tokens":3}`)}},
			ToolCalls: []models.ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}}})
		res := store(t, s, "plain", msgs...)
		base := time.Now().Add(time.Hour)
		if _, err := dbtest.PeerStore(ctx, db, res.SessionID, "A", []dbtest.PeerMessage{
			{Role: "assistant", Content: long}, {Role: "tool", Content: "r", ToolCallID: "p", ToolName: "t", ToolArguments: map[string]any{"a": 1}},
			{Role: "user", Content: long},
			// Tool fields where they do not belong, as the peer may write them.
			{Role: "user", Content: long, ToolCallID: "call_user", ToolName: "search", ToolArguments: map[string]any{"q": "user"}},
			{Role: "assistant", Content: long, ToolCallID: "call_assistant", ToolName: "search", ToolArguments: map[string]any{"q": "assistant"}},
			{Role: "system", Content: "short", ToolCallID: "call_system", ToolName: "search"},
			// Roles only the peer writes: the empty one (assistant) and any other.
			{Role: "", Content: "short"}, {Role: "", Content: long, ToolCallID: "call_", ToolName: "search", ToolArguments: map[string]any{"q": ""}},
			{Role: "critic", Content: "short"}, {Role: "critic", Content: long, ToolCallID: "call_critic", ToolName: "search", ToolArguments: map[string]any{"q": "critic"}},
		}, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		i, err := sessionstore.PlainRowsMismatch(s, "plain")
		if err != nil {
			t.Fatal(err)
		}
		if i >= 0 {
			t.Fatalf("row %d loads differently when only a plain load's fields are read", i)
		}
	})
}

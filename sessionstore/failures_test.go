package sessionstore_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Every kind of failed step, and messages that look like one but are not:
// the sessions list's count (SessionStats.Failed, narrowed in SQL) equals
// convert.Failure over the loaded session, on every database. The
// narrowing cannot drop a failure the rule marks.
func TestFailedStepsCounted(t *testing.T) {
	t.Parallel()
	turn := `[{"kind":"request","parts":[{"part_kind":"user-prompt","content":"q"}]},` +
		`{"kind":"response","parts":[{"part_kind":"tool-call","tool_name":"t","args":{},"tool_call_id":"c1"}]},` +
		`{"kind":"request","parts":[{"part_kind":"retry-prompt","tool_name":"t","tool_call_id":"c1","content":"bad args"}]},` +
		`{"kind":"response","parts":[{"part_kind":"text","content":"no"}],"finish_reason":"content_filter"},` +
		`{"kind":"response","parts":[{"part_kind":"text","content":"status: fine, no error here"}]}]`
	in, err := convert.DecodePydanticAI(strings.NewReader(turn))
	if err != nil {
		t.Fatal(err)
	}
	refusal, _ := json.Marshal(map[string]any{"type": "message", "role": "assistant", "content": []any{map[string]any{"type": "refusal", "refusal": "no"}}})
	plain := []models.HistoryMessage{
		{Role: "user", Content: `{"status": "error"}`}, // a user's text is never a failed step
		{Role: "assistant", Content: "", ToolCalls: []models.ToolCall{{ID: "d1", Name: "w", Arguments: "{}"}, {ID: "d2", Name: "w", Arguments: "{}"}, {ID: "d3", Name: "w", Arguments: "{}"}, {ID: "d4", Name: "w", Arguments: "{}"}}},
		{Role: "tool", Content: `{"status": "error", "message": "no such city"}`, ToolCallID: "d1", ToolName: "w"},
		{Role: "tool", Content: `{"is_error": true}`, ToolCallID: "d2", ToolName: "w"},
		{Role: "tool", Content: `{"error": "timeout"}`, ToolCallID: "d3", ToolName: "w"},
		{Role: "tool", Content: `{"status": "ok", "error": ""}`, ToolCallID: "d4", ToolName: "w"}, // not a failure
		{Role: "assistant", Content: "no", Extra: []models.Field{{Key: sessionstore.AgentsSourceKey, Value: refusal}}},
	}
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("fails")
		a, err := s.Store(ctx, "pyd", in.Messages, sessionstore.StoreOptions{Decoded: true})
		if err != nil {
			t.Fatal(err)
		}
		b := store(t, s, "plain", plain...)
		c := store(t, s, "none", msg("user", "hi"), msg("assistant", "hello"))
		stats, err := s.SessionStats(ctx, []uuid.UUID{a.SessionID, b.SessionID, c.SessionID})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			key  string
			id   uuid.UUID
			want int // by hand: the retry and the content filter; three tool errors and the refusal; none
		}{{"pyd", a.SessionID, 2}, {"plain", b.SessionID, 4}, {"none", c.SessionID, 0}} {
			h, err := s.Load(ctx, x.key, sessionstore.LoadOptions{Extras: true, Sources: true})
			if err != nil {
				t.Fatal(err)
			}
			rule := 0
			for _, m := range h {
				if convert.Failure(m) != "" {
					rule++
				}
			}
			if got := stats[x.id].Failed; got != x.want || rule != x.want {
				t.Errorf("%s: the list counts %d failed steps, the rule over the load %d, by hand %d", x.key, got, rule, x.want)
			}
		}
	})
}

package sessionstore_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

// The arguments a pydantic-ai load sends for a call stored on the assistant
// message (tool_calls) that the tool row answering it says otherwise
// (SPEC §5): the tool row's tool_arguments, as the Python service sends them
// from the same rows. Without tool_arguments the stored call's own arguments
// go (the Python service would send the tool's result as its arguments:
// docs/interop.md). Rows written by remstore and by the Python service alike;
// the plain load shows the arguments that are sent.
func TestPydanticAILoadCallArguments(t *testing.T) {
	t.Parallel()
	want := map[string]string{
		"w1": `{"city":"Porto"}`, // tool_arguments win over the stored {"city":"Lisbon"}
		"t1": `{}`,               // no tool_arguments: the stored call's {}, not the result
		"s1": `{"q":"x"}`,        // no tool_arguments: the stored call's
		"o1": `{"n":1}`,          // no stored call: tool_arguments
	}
	calls := []models.ToolCall{
		{ID: "w1", Name: "weather", Arguments: `{"city":"Lisbon"}`},
		{ID: "t1", Name: "clock", Arguments: `{}`},
		{ID: "s1", Name: "search", Arguments: `{"q":"x"}`},
	}
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		s := newStore(t, db, "A", 10)
		// remstore writes.
		store(t, s, "calls",
			msg("user", "weather in Lisbon, and the time?"),
			models.HistoryMessage{Role: "assistant", Content: "checking", ToolCalls: calls},
			models.HistoryMessage{Role: "tool", Content: `{"celsius":21}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: []byte(`{"city":"Porto"}`)},
			models.HistoryMessage{Role: "tool", Content: `{"h":10,"m":30}`, ToolCallID: "t1", ToolName: "clock"},
			models.HistoryMessage{Role: "tool", Content: `[1]`, ToolCallID: "s1", ToolName: "search"},
			models.HistoryMessage{Role: "tool", Content: `{"r":1}`, ToolCallID: "o1", ToolName: "other", ToolArguments: []byte(`{"n":1}`)},
			msg("assistant", "Porto: 21 °C, 10:30."))
		checkCallArgs(t, s, "calls", want)

		// The Python service writes the same rows (its tool_calls as given).
		sid := uuid.New()
		peerCalls := []map[string]any{}
		for _, c := range calls {
			peerCalls = append(peerCalls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		if _, err := dbtest.PeerStore(ctx, db, sid, "A", []dbtest.PeerMessage{
			{Role: "user", Content: "weather in Lisbon, and the time?"},
			{Role: "assistant", Content: "checking", ToolCalls: peerCalls},
			{Role: "tool", Content: `{"celsius":21}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: map[string]any{"city": "Porto"}},
			{Role: "tool", Content: `{"h":10,"m":30}`, ToolCallID: "t1", ToolName: "clock"},
			{Role: "tool", Content: `[1]`, ToolCallID: "s1", ToolName: "search"},
			{Role: "tool", Content: `{"r":1}`, ToolCallID: "o1", ToolName: "other", ToolArguments: map[string]any{"n": 1}},
			{Role: "assistant", Content: "Porto: 21 °C, 10:30."},
		}, func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }); err != nil {
			t.Fatal(err)
		}
		checkCallArgs(t, s, sid.String(), want)
	})
}

// checkCallArgs loads the session as the CLI and the HTTP API do for
// --format pydantic-ai and compares each tool-call part's arguments by call id;
// the plain load's tool_arguments are those sent, where a row has them.
func checkCallArgs(t *testing.T, s *sessionstore.Store, key string, want map[string]string) {
	t.Helper()
	var b bytes.Buffer
	if _, err := convert.WriteStream(&b, convert.Options{SystemPrompt: "s"}, func(fn func(models.HistoryMessage) error) error {
		return s.LoadEach(ctx, key, sessionstore.LoadOptions{Sources: true}, fn)
	}); err != nil {
		t.Fatal(err)
	}
	var msgs []struct {
		Parts []struct {
			PartKind   string          `json:"part_kind"`
			ToolCallID string          `json:"tool_call_id"`
			Args       json.RawMessage `json:"args"`
		} `json:"parts"`
	}
	if err := json.Unmarshal(b.Bytes(), &msgs); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.PartKind == "tool-call" {
				got[p.ToolCallID] = string(p.Args)
			}
		}
	}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: call %s sent with %s, want %s", key, id, got[id], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: calls %v, want %v", key, got, want)
	}
	plain, err := s.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range plain {
		if m.ToolArguments != nil && !dbtest.JSONEqual(t, m.ToolArguments, []byte(want[m.ToolCallID])) {
			t.Errorf("%s: the plain load shows %s for %s, the pydantic-ai load sends %s", key, m.ToolArguments, m.ToolCallID, want[m.ToolCallID])
		}
	}
}

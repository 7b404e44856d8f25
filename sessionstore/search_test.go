package sessionstore_test

import (
	"strings"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Search on every backend: the same words find the same rows, the tenant's
// only, live ones only, newest first; the peer's rows are found too.
func TestSearch(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		a, b := mk("A"), mk("B")
		long := "Here is the plan: " + strings.Repeat("walk, eat, sleep. ", 20) + "Then the LISBON tram."
		r1 := store(t, a, "trip", msg("user", "Plan a trip to Lisbon in May"), msg("assistant", long),
			models.HistoryMessage{Role: "tool", Content: `{"flights":3}`, ToolCallID: "c1", ToolName: "search_flights"})
		store(t, a, "other", msg("user", "Lisboa or Porto? Café first."))
		store(t, b, "trip", msg("user", "bob goes to Lisbon too"))
		gone := store(t, a, "gone", msg("user", "a deleted Lisbon note"))
		if err := a.DeleteSession(ctx, "gone", sessionstore.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		_ = gone
		if _, err := a.UpdateSession(ctx, "trip", sessionstore.SessionUpdate{AgentName: models.Ptr("Travel-Planner")}); err != nil {
			t.Fatal(err)
		}
		find := func(o sessionstore.SearchOptions) []sessionstore.SearchHit {
			t.Helper()
			hits, err := a.Search(ctx, o)
			if err != nil {
				t.Fatalf("%+v: %v", o, err)
			}
			return hits
		}
		// Words, case-folded, newest first; a word's start finds it; every
		// word must be there; bob's and the deleted session's rows are not.
		hits := find(sessionstore.SearchOptions{Query: "lisbon"})
		if len(hits) != 2 || hits[0].Role != "assistant" || hits[1].Role != "user" || hits[0].SessionID != r1.SessionID || hits[0].AgentName != "Travel-Planner" {
			t.Fatalf("lisbon: %+v", hits)
		}
		if !strings.Contains(hits[0].Snippet, "LISBON tram") || !strings.HasPrefix(hits[0].Snippet, "…") || hits[0].Key != r1.Keys[1] {
			t.Errorf("snippet %q key %q", hits[0].Snippet, hits[0].Key)
		}
		// Each hit says where it is (issue 43: always -1): the position
		// lookup --index takes, which finds the same answer.
		if hits[0].Index != 1 || hits[1].Index != 0 {
			t.Errorf("indexes %d, %d, want 1, 0", hits[0].Index, hits[1].Index)
		}
		if full, err := a.LookupIndex(ctx, "trip", hits[0].Index); err != nil || full != long {
			t.Errorf("lookup --index %d: %v", hits[0].Index, err)
		}
		if h := find(sessionstore.SearchOptions{Query: "LISB"}); len(h) != 3 { // Lisbon twice, and Lisboa
			t.Errorf("LISB: %d hits", len(h))
		}
		if h := find(sessionstore.SearchOptions{Query: "lisbon may"}); len(h) != 1 || h[0].Role != "user" {
			t.Errorf("lisbon may: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "café"}); len(h) != 1 {
			t.Errorf("café: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "peer question"}); len(h) != 1 { // the peer's row (each's fixture)
			t.Errorf("the peer's row: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "nowhere"}); len(h) != 0 {
			t.Errorf("nowhere: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "lisbon", Limit: 1}); len(h) != 1 {
			t.Errorf("limit 1: %d", len(h))
		}
		// Tool names and agents: a case-insensitive substring; % is literal.
		if h := find(sessionstore.SearchOptions{Query: "FLIGHT", In: "tool"}); len(h) != 1 || h[0].ToolName != "search_flights" || !strings.Contains(h[0].Snippet, "flights") || h[0].Index != 2 {
			t.Errorf("tool: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "%", In: "tool"}); len(h) != 0 {
			t.Errorf("tool %%: %+v", h)
		}
		if h := find(sessionstore.SearchOptions{Query: "planner", In: "agent"}); len(h) != 1 || h[0].SessionID != r1.SessionID {
			t.Errorf("agent: %+v", h)
		}
		// A key: where its message is.
		if h := find(sessionstore.SearchOptions{Query: "REM LOOKUP " + r1.Keys[1], In: "key"}); len(h) != 1 || h[0].Index != 1 || h[0].SessionID != r1.SessionID {
			t.Errorf("key: %+v", h)
		}
		if h, err := b.Search(ctx, sessionstore.SearchOptions{Query: r1.Keys[1], In: "key"}); err != nil || len(h) != 0 {
			t.Errorf("bob finds alice's key: %+v %v", h, err)
		}
		// Bad input names its field.
		for _, c := range []struct {
			o     sessionstore.SearchOptions
			field string
		}{{sessionstore.SearchOptions{Query: " "}, "q"}, {sessionstore.SearchOptions{Query: "!!!"}, "q"}, {sessionstore.SearchOptions{Query: "a\x00b"}, "q"},
			{sessionstore.SearchOptions{Query: "x", In: "everything"}, "in"}, {sessionstore.SearchOptions{Query: "x", Limit: 1000}, "limit"},
			{sessionstore.SearchOptions{Query: "not-a-key", In: "key"}, "q"}, {sessionstore.SearchOptions{Query: strings.Repeat("é", 257)}, "q"}} {
			_, err := a.Search(ctx, c.o)
			if fe, ok := models.AsFieldError(err); !ok || fe.Field != c.field {
				t.Errorf("%+v: %v, want bad input naming %q", c.o, err, c.field)
			}
		}
	})
}

package sessionstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// Issue 41: a search narrows by role, session and time and pages, saying
// whether another page follows, on every database. Nine messages one
// second apart in two sessions; the expected hits are counted by hand.
func TestSearchNarrowsAndPages(t *testing.T) {
	t.Parallel()
	base := time.Date(2025, 5, 1, 9, 0, 0, 0, time.UTC)
	for _, d := range dbtest.Dialects {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			clock := base
			s, err := sessionstore.New(d.New(t), sessionstore.Options{UserID: "alice", Now: func() time.Time { return clock }})
			if err != nil {
				t.Fatal(err)
			}
			// rome-0 .. rome-8: even ones user messages in "a", odd ones
			// answers in "b"; message i stored at base + i s.
			for i := range 9 {
				clock = base.Add(time.Duration(i) * time.Second)
				role, sess := models.RoleUser, "a"
				if i%2 == 1 {
					role, sess = models.RoleAssistant, "b"
				}
				if _, err := s.Store(ctx, sess, []models.HistoryMessage{{Role: role, Content: fmt.Sprintf("rome note %d", i)}}, sessionstore.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.UpdateSession(ctx, "b", sessionstore.SessionUpdate{AgentName: models.Ptr("Trip-Planner")}); err != nil {
				t.Fatal(err)
			}
			page := func(o sessionstore.SearchOptions) (string, bool) {
				t.Helper()
				o.Query = "rome"
				r, err := s.SearchPage(ctx, o)
				if err != nil {
					t.Fatalf("%+v: %v", o, err)
				}
				got := ""
				for _, h := range r.Hits {
					got += h.Snippet[len("rome note "):] // newest first
				}
				return got, r.More
			}
			for _, tc := range []struct {
				name string
				o    sessionstore.SearchOptions
				want string
				more bool
			}{
				{"all", sessionstore.SearchOptions{}, "876543210", false},
				{"a page of 4", sessionstore.SearchOptions{Limit: 4}, "8765", true},
				{"the second", sessionstore.SearchOptions{Limit: 4, Offset: 4}, "4321", true},
				{"the last", sessionstore.SearchOptions{Limit: 4, Offset: 8}, "0", false},
				{"exactly the rest", sessionstore.SearchOptions{Limit: 3, Offset: 6}, "210", false},
				{"past the end", sessionstore.SearchOptions{Offset: 20}, "", false},
				{"answers", sessionstore.SearchOptions{Role: "assistant"}, "7531", false},
				{"session a by name", sessionstore.SearchOptions{Session: "a"}, "86420", false},
				{"from 3 s", sessionstore.SearchOptions{After: base.Add(3 * time.Second)}, "876543", false},
				{"before 3 s", sessionstore.SearchOptions{Before: base.Add(3 * time.Second)}, "210", false},
				{"a window, answers, paged", sessionstore.SearchOptions{After: base.Add(2 * time.Second), Before: base.Add(8 * time.Second), Role: "assistant", Limit: 2},
					"75", true},
				{"a session she lacks", sessionstore.SearchOptions{Session: "nope"}, "", false},
				{"by agent, any case", sessionstore.SearchOptions{Agent: "PLANN"}, "7531", false},
				{"an agent no session has", sessionstore.SearchOptions{Agent: "nobody"}, "", false},
			} {
				if got, more := page(tc.o); got != tc.want || more != tc.more {
					t.Errorf("%s: hits %q more %v, want %q %v", tc.name, got, more, tc.want, tc.more)
				}
			}
			for _, bad := range []struct {
				o     sessionstore.SearchOptions
				field string
			}{
				{sessionstore.SearchOptions{Query: "rome", Role: "robot"}, "role"},
				{sessionstore.SearchOptions{Query: "rome", Offset: -1}, "offset"},
				{sessionstore.SearchOptions{Query: "rome", Offset: sessionstore.MaxSearchOffset + 1}, "offset"},
				{sessionstore.SearchOptions{Query: "rome", After: base, Before: base}, "before"},
				{sessionstore.SearchOptions{Query: "planner", In: sessionstore.SearchAgent, Role: "user"}, "in"},
			} {
				_, err := s.SearchPage(ctx, bad.o)
				if fe, ok := models.AsFieldError(err); !ok || fe.Field != bad.field {
					t.Errorf("%+v: %v, want an error naming %s", bad.o, err, bad.field)
				}
			}
		})
	}
}

// Issue 41: a tool search finds the answers that called the tool (their
// tool_calls), beside the tool's results, naming the tool on each hit.
func TestToolSearchFindsTheCalls(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		store(t, s, "calls", msg("user", "weather?"),
			models.HistoryMessage{Role: "assistant", Content: "", ToolCalls: []models.ToolCall{{ID: "c1", Name: "get_Weather", Arguments: `{"city":"Oslo"}`}, {ID: "c2", Name: "clock", Arguments: `{}`}}},
			models.HistoryMessage{Role: "tool", Content: `{"celsius": 3}`, ToolCallID: "c1", ToolName: "get_Weather"},
			models.HistoryMessage{Role: "assistant", Content: "weather is a word here, not a call"})
		hits, err := s.Search(ctx, sessionstore.SearchOptions{Query: "WEATHER", In: sessionstore.SearchTool})
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, h := range hits {
			got += h.Role + ":" + h.ToolName + " "
		}
		if got != "tool:get_Weather assistant:get_Weather " {
			t.Fatalf("tool search: %q, want the return and the answer that called it", got)
		}
		if hits, err := s.Search(ctx, sessionstore.SearchOptions{Query: "clock", In: sessionstore.SearchTool, Role: "assistant"}); err != nil || len(hits) != 1 || hits[0].ToolName != "clock" {
			t.Fatalf("an answer by its second call: %+v %v", hits, err)
		}
	})
}

// Issue 41: a content search narrowed to a tool keeps that tool's results
// and the answers that called it, on every database; the walk of the newest
// messages is not taken then (a tool's rows are told apart by the messages).
func TestContentSearchByTool(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		store(t, s, "calls", msg("user", "oslo weather and oslo time?"),
			models.HistoryMessage{Role: "assistant", Content: "checking oslo", ToolCalls: []models.ToolCall{{ID: "c1", Name: "get_weather", Arguments: `{"city":"oslo"}`}}},
			models.HistoryMessage{Role: "tool", Content: `{"city": "oslo", "celsius": 3}`, ToolCallID: "c1", ToolName: "get_weather"},
			models.HistoryMessage{Role: "assistant", Content: "oslo clock", ToolCalls: []models.ToolCall{{ID: "c2", Name: "clock", Arguments: `{}`}}},
			models.HistoryMessage{Role: "tool", Content: `{"oslo": "12:00"}`, ToolCallID: "c2", ToolName: "clock"},
			models.HistoryMessage{Role: "assistant", Content: "oslo: 3 degrees at noon"})
		for _, tc := range []struct {
			tool, want string // hits newest first, role:index
		}{
			{"WEATHER", "tool:2 assistant:1 "},
			{"clock", "tool:4 assistant:3 "},
			{"nothing", ""},
			{"", "assistant:5 tool:4 assistant:3 tool:2 assistant:1 user:0 "},
		} {
			hits, err := s.Search(ctx, sessionstore.SearchOptions{Query: "oslo", Tool: tc.tool})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			for _, h := range hits {
				got += fmt.Sprintf("%s:%d ", h.Role, h.Index)
			}
			if got != tc.want {
				t.Errorf("oslo, tool %q: %q, want %q", tc.tool, got, tc.want)
			}
		}
		if _, err := s.Search(ctx, sessionstore.SearchOptions{Query: "oslo", Tool: "a\x00b"}); err == nil {
			t.Error("a NUL in tool is not refused")
		}
	})
}

// Each hit's position, across sessions and beside removed rows, is its
// place in the load: the positions are sums of the live rows between a
// session's hits (counted once), which must come to what counting from the
// start gave; its key finds it.
func TestSearchPositionsBesideRemovedRows(t *testing.T) {
	t.Parallel()
	each(t, func(t *testing.T, mk func(string) *sessionstore.Store) {
		s := mk("A")
		batch := func(key string, from, n int) {
			var ms []models.HistoryMessage
			for i := from; i < from+n; i++ {
				ms = append(ms, msg("assistant", fmt.Sprintf("needle %s %d", key, i))) // lookup finds answers
			}
			store(t, s, key, ms...)
		}
		pop := func(key string) {
			if _, ok, err := s.PopMessage(ctx, key); err != nil || !ok {
				t.Fatalf("pop %s: %v %v", key, ok, err)
			}
		}
		batch("a", 0, 10)
		pop("a") // a removed row between hits
		batch("b", 0, 10)
		batch("a", 10, 10)
		pop("b")
		pop("b")
		batch("b", 10, 5)
		store(t, s, "a", msg("user", "haystack")) // not a hit, counted before none
		batch("a", 20, 3)
		hits, err := s.Search(ctx, sessionstore.SearchOptions{Query: "needle", Limit: 100})
		if err != nil || len(hits) != 9+10+3+8+5 {
			t.Fatalf("%d hits, %v", len(hits), err)
		}
		loaded := map[string][]models.HistoryMessage{}
		for _, key := range []string{"a", "b"} {
			if loaded[key], err = s.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true}); err != nil {
				t.Fatal(err)
			}
		}
		for _, h := range hits {
			// Its place in the load (the viewer's anchor), counted apart;
			// its key finds it wherever the removed rows put it.
			if l := loaded[h.SessionName]; h.Index < 0 || h.Index >= len(l) || l[h.Index].Content != h.Snippet {
				t.Errorf("hit %q in %s at %d: not there in the load", h.Snippet, h.SessionName, h.Index)
			}
			if full, err := s.Lookup(ctx, h.Key); err != nil || full != h.Snippet {
				t.Errorf("hit %q: its key %s gives %q, %v", h.Snippet, h.Key, full, err)
			}
		}
	})
}

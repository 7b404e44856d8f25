package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// connect serves st over in-memory transports and returns the client's
// session.
func connect(t *testing.T, st Store) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, stt := mcp.NewInMemoryTransports()
	ss, err := New(st, "test").Connect(ctx, stt, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// history calls session_history and returns the page's messages and the
// note that follows them ("" when none does).
func history(t *testing.T, cs *mcp.ClientSession, args map[string]any) ([]map[string]any, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "session_history", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	first := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("session_history %v: %s", args, first)
	}
	if len(first) > MaxHistoryBytes+1 && !strings.HasPrefix(first, `[{"role":"user","content":"huge`) {
		t.Fatalf("session_history %v: %d bytes, over the page's bound", args, len(first))
	}
	var page []map[string]any
	if err := json.Unmarshal([]byte(first), &page); err != nil {
		t.Fatalf("session_history %v: %v", args, err)
	}
	note := ""
	if len(res.Content) > 1 {
		note = res.Content[1].(*mcp.TextContent).Text
	}
	return page, note
}

// session_history answers a page of a long session, not all of it: at
// most the limit (HistoryLimit by default) and about MaxHistoryBytes, with
// a note naming the next page's offset; the pages, followed, are the
// whole history in order. (A 200,000-message session was one 131 MB
// answer.)
func TestHistoryIsPaged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice", TruncateLength: 10})
	if err != nil {
		t.Fatal(err)
	}
	const n = 1000
	var msgs []models.HistoryMessage
	for i := range n {
		msgs = append(msgs, models.HistoryMessage{Role: "user", Content: fmt.Sprintf("q%d", i)},
			models.HistoryMessage{Role: "assistant", Content: fmt.Sprintf("answer %d, long enough to be cut", i)})
	}
	if _, err := st.Store(ctx, "long", msgs, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	full, err := st.Load(ctx, "long", sessionstore.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, st)
	if page, note := history(t, cs, map[string]any{"session_id": "long"}); len(page) != HistoryLimit || note == "" {
		t.Fatalf("the first page of %d messages: %d messages, note %q", 2*n, len(page), note)
	}

	// follow pages the history from offset 0 and checks it against full.
	follow := func(key string, full []models.HistoryMessage, args map[string]any, perPage int) int {
		t.Helper()
		var got []map[string]any
		pages := 0
		for offset := 0; ; pages++ {
			a := map[string]any{"session_id": key}
			if offset > 0 { // the first page as a caller asks for it: no offset
				a["offset"] = offset
			}
			for k, v := range args {
				a[k] = v
			}
			page, note := history(t, cs, a)
			if perPage > 0 && note != "" && len(page) != perPage {
				t.Fatalf("%s offset %d: %d messages, want %d", key, offset, len(page), perPage)
			}
			if len(page) == 0 {
				t.Fatalf("%s offset %d: an empty page", key, offset)
			}
			got = append(got, page...)
			if note == "" {
				break
			}
			want := fmt.Sprintf("messages %d to %d of the history, and more follow; call session_history again with offset %d", offset, len(got)-1, len(got))
			if !strings.HasPrefix(note, "truncated: ") || !strings.Contains(note, want) {
				t.Fatalf("%s offset %d: note %q, want %q", key, offset, note, want)
			}
			offset = len(got)
		}
		if len(got) != len(full) {
			t.Fatalf("%s: the pages hold %d messages, the history %d", key, len(got), len(full))
		}
		for i, m := range got {
			if m["content"] != full[i].Content || (full[i].EntityKey != "" && m["_entity_key"] != full[i].EntityKey) {
				t.Fatalf("%s: message %d is %v, want %q %q", key, i, m, full[i].Content, full[i].EntityKey)
			}
		}
		return pages + 1
	}
	if pages := follow("long", full, nil, HistoryLimit); pages != (2*n+HistoryLimit-1)/HistoryLimit {
		t.Fatalf("%d pages of the default limit", pages)
	}
	if pages := follow("long", full, map[string]any{"limit": MaxHistoryLimit}, MaxHistoryLimit); pages != 1 {
		t.Fatalf("%d pages of the largest limit", pages)
	}
	follow("long", full, map[string]any{"limit": 7}, 7)
	if page, note := history(t, cs, map[string]any{"session_id": "long", "offset": 2 * n}); len(page) != 0 || note != "" {
		t.Fatalf("past the end: %d messages, note %q", len(page), note)
	}

	// Long messages: a page stops at MaxHistoryBytes (a message alone
	// larger than that is a page of its own).
	var wide []models.HistoryMessage
	for i := range 30 {
		wide = append(wide, models.HistoryMessage{Role: "user", Content: fmt.Sprintf("wide %d ", i) + strings.Repeat("w", 200<<10)})
	}
	wide = append(wide, models.HistoryMessage{Role: "user", Content: "huge " + strings.Repeat("h", MaxHistoryBytes+1)},
		models.HistoryMessage{Role: "user", Content: "after"})
	if _, err := st.Store(ctx, "wide", wide, sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	fullWide, err := st.Load(ctx, "wide", sessionstore.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pages := follow("wide", fullWide, map[string]any{"compress": false}, 0); pages < 30*(200<<10)/MaxHistoryBytes+2 {
		t.Fatalf("%d pages of 30 messages of 200 KiB and one over the bound", pages)
	}

	// Limits out of range are refused naming the argument.
	for _, a := range []map[string]any{{"limit": MaxHistoryLimit + 1}, {"limit": -1}, {"offset": -1}} {
		a["session_id"] = "long"
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "session_history", Arguments: a})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		var field string
		for k := range a {
			if k != "session_id" {
				field = k
			}
		}
		if !res.IsError || !strings.Contains(text, `"`+field+`"`) {
			t.Fatalf("%v: %s", a, text)
		}
	}
}

// The tool's description tells the model how to page.
func TestHistoryDescriptionSaysHowToPage(t *testing.T) {
	t.Parallel()
	st, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := connect(t, st).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name != "session_history" {
			continue
		}
		for _, want := range []string{"offset", "limit", fmt.Sprint(HistoryLimit), fmt.Sprint(MaxHistoryLimit), "truncated"} {
			if !strings.Contains(tool.Description, want) {
				t.Errorf("the description lacks %q: %s", want, tool.Description)
			}
		}
		b, _ := json.Marshal(tool.InputSchema)
		for _, want := range []string{`"offset"`, `"limit"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the input schema lacks %s: %s", want, b)
			}
		}
		return
	}
	t.Fatal("no session_history tool")
}

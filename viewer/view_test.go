package viewer_test

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// The history view draws each row's view (package visible): what a model
// may be sent for it. A user row "hi" whose pydantic-ai source or Agents SDK
// item adds an image shows the image's link, an empty answer whose item is
// a hosted tool's call shows its output, an answer's reasoning and tool
// calls show, not only the row's text.
func TestHistoryDrawsTheView(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	alice, err := sessionstore.New(f.db, sessionstore.Options{UserID: "alice", TruncateLength: viewerT})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := models.DecodeHistory([]byte(`[
		{"role":"user","content":"hi","pydantic_ai":{"message":{"kind":"request"},"parts":[{"part_kind":"user-prompt","content":["hi",{"kind":"image-url","url":"https://img.example/pydantic.png"}]}]}},
		{"role":"assistant","content":"","openai_agents":{"type":"mcp_call","id":"mcp_1","server_label":"files","name":"read","arguments":"{}","output":"the hosted tool's output"}},
		{"role":"user","content":"hi","openai_agents":{"role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_file","file_url":"https://img.example/agents.pdf"}]}},
		{"role":"assistant","content":"4.","tool_calls":[{"id":"c1","name":"add_numbers","arguments":"{\"a\":2}"}],"reasoning":[{"provider":"anthropic","item":{"type":"thinking","thinking":"two and two make four","signature":"EqQBsigned"}}]},
		{"role":"tool","content":"4","tool_call_id":"c1","tool_name":"add_numbers"}
	]`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := alice.Store(ctx, "doors", rows, sessionstore.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := f.client(t, aliceKey, "")
	// What the page draws: the Copy buttons' JSON (the stored row, every
	// key) is not drawn.
	page := copyJSON.ReplaceAllString(get(t, c, f.srv.URL+"/ui/sessions/"+r.SessionID.String(), http.StatusOK), "")
	page = html.UnescapeString(page)
	for _, want := range []string{
		"https://img.example/pydantic.png", "pydantic_ai.parts[0].content[1]",
		"the hosted tool's output", "mcp_call",
		"https://img.example/agents.pdf",
		"two and two make four", "sealed EqQBsigned",
		"add_numbers",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the history view does not show %q", want)
		}
	}
}

var copyJSON = regexp.MustCompile(`data-json="[^"]*"`)

package viewer_test

import (
	"context"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/viewer"
)

// Both tabs draw each call with the arguments the pydantic-ai load sends
// (convert.CallArguments): the tool message's tool_arguments where present,
// even where the stored call says otherwise (SPEC §5); else the stored
// call's; else, for a result no stored call names, its content. On the
// history tab each tool message draws its call, also on a page that starts
// after the assistant message that made it.
func TestViewerDrawsTheArgumentsSent(t *testing.T) {
	db := dbtest.NewSQLite(t)
	s, err := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Store(context.Background(), "calls", []models.HistoryMessage{
		{Role: "user", Content: "weather?"},
		{Role: "assistant", Content: "checking", ToolCalls: []models.ToolCall{
			{ID: "w1", Name: "weather", Arguments: `{"city":"Stored-Lisbon"}`},
			{ID: "t1", Name: "clock", Arguments: `{"tz":"Stored-UTC"}`}}},
		{Role: "tool", Content: `{"celsius":21}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: []byte(`{"city":"Sent-Porto"}`)},
		{Role: "tool", Content: `{"h":10}`, ToolCallID: "t1", ToolName: "clock"},
		{Role: "tool", Content: `{"r":"Sent-Content"}`, ToolCallID: "o1", ToolName: "other"},
		{Role: "assistant", Content: "done"},
	}, sessionstore.StoreOptions{})

	if err != nil {
		t.Fatal(err)
	}
	v, err := viewer.New(viewer.Options{NewStore: func(string) (viewer.Store, error) { return s, nil },
		SignIn: func(string, string) (string, string, error) { return "alice", "user alice", nil }, KeyOptional: true})
	if err != nil {
		t.Fatal(err)
	}
	base := "/ui/sessions/" + r.SessionID.String()
	want := map[string]string{`id="m2"`: "Sent-Porto", `id="m3"`: "Stored-UTC", `id="m4"`: "Sent-Content"}
	for _, path := range []string{base, base + "?from=2"} {
		page := signedInGet(t, v, path)
		for id, args := range want {
			i := strings.Index(page, id)
			if i < 0 {
				t.Fatalf("%s: no message %s", path, id)
			}
			li := page[i:]
			li = li[:strings.Index(li, "</li>")]
			call := li[strings.Index(li, `class="args"`):]
			if call = call[:strings.Index(call, "</pre>")]; !strings.Contains(call, args) {
				t.Errorf("%s: message %s draws its call with %q, want the arguments sent (%s)", path, id, call, args)
			}
		}
	}
	page := signedInGet(t, v, base+"?view=pydantic")
	for _, args := range want {
		if !strings.Contains(page, args) {
			t.Errorf("the pydantic-ai tab lacks the arguments sent %s", args)
		}
	}
	if strings.Contains(page, "Stored-Lisbon") {
		t.Errorf("the pydantic-ai tab sends the stored call's arguments where the tool message says otherwise")
	}
}

package sdk_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remanthropic"
	"github.com/remstore/remstore/sdk/remgenai"
	"github.com/remstore/remstore/sdk/remlangchain"
	"github.com/remstore/remstore/sdk/remopenai"
)

// Every adapter sends a stored call with the arguments the pydantic-ai
// history sends (convert.CallArguments): where the tool message answering
// it says otherwise in tool_arguments, those (SPEC §5).
func TestAdaptersSendTheToolMessagesArguments(t *testing.T) {
	h := []models.HistoryMessage{{Role: models.RoleUser, Content: "weather?"},
		{Role: models.RoleAssistant, Content: "checking",
			ToolCalls: []models.ToolCall{{ID: "w1", Name: "weather", Arguments: `{"city":"Stored-Lisbon"}`}}},
		{Role: models.RoleTool, Content: `{"celsius":21}`, ToolCallID: "w1", ToolName: "weather", ToolArguments: []byte(`{"city":"Sent-Porto"}`)},
		{Role: models.RoleAssistant, Content: "21 °C"}}
	requests := map[string]func() (any, error){
		"remopenai.Messages": func() (any, error) { return remopenai.Messages(h, remopenai.Options{}) },
		"remopenai.InputItems": func() (any, error) {
			return remopenai.InputItems(h, remopenai.Options{})
		},
		"remanthropic.Messages": func() (any, error) {
			_, msgs, err := remanthropic.Messages(h, remanthropic.Options{})
			return msgs, err
		},
		"remgenai.Contents": func() (any, error) {
			_, contents, err := remgenai.Contents(h, remgenai.Options{})
			return contents, err
		},
		"remlangchain.MessageContents": func() (any, error) {
			return remlangchain.MessageContents(h, remlangchain.Options{})
		},
	}
	for name, build := range requests {
		req, err := build()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s := string(b); !strings.Contains(s, "Sent-Porto") || strings.Contains(s, "Stored-Lisbon") {
			t.Errorf("%s sends the call with other arguments than the tool message's: %s", name, s)
		}
	}
}

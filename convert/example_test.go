package convert_test

import (
	"fmt"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
)

func ExampleJSON() {
	ts := "2024-01-15T10:30:00+00:00"
	history := []models.HistoryMessage{
		{Role: models.RoleUser, Content: "Hello", Timestamp: &ts},
		{Role: models.RoleAssistant, Content: "Hi there", Timestamp: &ts},
		{Role: models.RoleTool, Content: `{"result": 1}`, ToolName: "search", ToolCallID: "call_123", Timestamp: &ts},
	}
	for _, m := range convert.Convert(history, convert.Options{SystemPrompt: "Be brief."}) {
		fmt.Print(m.Kind, ":")
		for _, p := range m.Parts {
			fmt.Print(" ", p.PartKind)
		}
		fmt.Println()
	}
	// Output:
	// request: system-prompt
	// request: user-prompt
	// response: tool-call text
	// request: tool-return
}

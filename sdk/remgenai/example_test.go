package remgenai_test

import (
	"fmt"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remgenai"
)

// A history the Python peer wrote (no stored calls) as genai contents: the
// call is synthesized from the tool result, and the result, not an object,
// is sent as pydantic-ai sends it: text that is not JSON as {"raw": text}.
func Example() {
	history := []models.HistoryMessage{
		{Role: models.RoleUser, Content: "Weather?"},
		{Role: models.RoleAssistant, Content: "Checking."},
		{Role: models.RoleTool, Content: "sunny", ToolCallID: "c1", ToolName: "get weather", ToolArguments: []byte(`{"city":"Lisbon"}`)},
	}
	_, contents, _ := remgenai.Contents(history, remgenai.Options{})
	call := contents[1].Parts[1].FunctionCall
	resp := contents[2].Parts[0].FunctionResponse
	fmt.Println(call.Name, call.Args["city"], resp.Response["raw"])
	// Output: get_weather Lisbon sunny
}

package convert

import (
	"encoding/json"
	"testing"

	"github.com/remstore/remstore/models"
)

func TestFailure(t *testing.T) {
	tool := func(c string) models.HistoryMessage {
		return models.HistoryMessage{Role: models.RoleTool, Content: c, ToolCallID: "c", ToolName: "t"}
	}
	withSource := func(role models.Role, src string) models.HistoryMessage {
		return models.HistoryMessage{Role: role, Content: "x", Extra: []models.Field{{Key: SourceKey, Value: json.RawMessage(src)}}}
	}
	for _, tc := range []struct {
		name string
		m    models.HistoryMessage
		want string
	}{
		{"status error", tool(`{"status": "error", "message": "city not found"}`), FailureToolError},
		{"status ERROR", tool(`{"status":"ERROR"}`), FailureToolError},
		{"an escaped key", tool(`{"st\u0061tus": "error"}`), FailureToolError},
		{"an escaped value", tool(`{"status": "\u0065rror"}`), FailureToolError},
		{"is_error", tool(`{"is_error": true, "content": "boom"}`), FailureToolError},
		{"error text", tool(`{"error": "timeout"}`), FailureToolError},
		{"error null", tool(`{"error": null, "result": 1}`), ""},
		{"error empty", tool(`{"error": "", "result": 1}`), ""},
		{"success", tool(`{"status": "success", "results": [1]}`), ""},
		{"the word in a text", tool(`no error here`), ""},
		{"a user saying error", models.HistoryMessage{Role: models.RoleUser, Content: `{"status": "error"}`}, ""},
		{"retry prompt", withSource(models.RoleTool, `{"parts":[{"part_kind":"retry-prompt","tool_name":"t","tool_call_id":"c"}],"from_row":[0]}`), FailureRetry},
		{"content filter", withSource(models.RoleAssistant, `{"message":{"kind":"response","finish_reason":"content_filter"},"parts":[{"part_kind":"text"}],"from_row":[0]}`), FailureRefusal},
		{"a plain answer", withSource(models.RoleAssistant, `{"message":{"kind":"response","finish_reason":"stop"},"parts":[{"part_kind":"text"}],"from_row":[0]}`), ""},
		{"agents refusal", models.HistoryMessage{Role: models.RoleAssistant, Content: "", Extra: []models.Field{{Key: "openai_agents",
			Value: json.RawMessage(`{"type":"message","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}`)}}}, FailureRefusal},
	} {
		if got := Failure(tc.m); got != tc.want {
			t.Errorf("%s: Failure = %q, want %q", tc.name, got, tc.want)
		}
	}
}

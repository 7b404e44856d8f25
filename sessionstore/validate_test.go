package sessionstore_test

import (
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
)

// What the store refuses because it would lose it (SPEC §1), and the words
// of the refusal: the field, the value, the choices, the near one.
func TestValidateRefusesWhatItWouldLose(t *testing.T) {
	ts := func(s string) *string { return &s }
	for _, c := range []struct {
		name  string
		msg   models.HistoryMessage
		field string
		want  []string // substrings of the error; nil: accepted
	}{
		{"every role of SPEC §1", models.HistoryMessage{Role: "function", Content: "x"}, "", nil},
		{"role in capitals", models.HistoryMessage{Role: "USER"}, "role", []string{`"USER" is not a role`, "user, assistant, tool, system, function, model", `did you mean "user"?`}},
		{"role of another framework", models.HistoryMessage{Role: "bot"}, "role", []string{`"bot" is not a role`}},
		{"empty role", models.HistoryMessage{Role: ""}, "role", []string{`"" is not a role`}},
		{"typo in a key", models.HistoryMessage{Role: "user", Extra: []models.Field{{Key: "contnet", Value: []byte(`"hi"`)}}}, "contnet",
			[]string{"not a message key", `did you mean "content"?`}},
		{"a key of nothing", models.HistoryMessage{Role: "user", Extra: []models.Field{{Key: "colour", Value: []byte(`"red"`)}}}, "colour",
			[]string{"not a message key; the keys are role, content"}},
		{"the extras a full load prints", models.HistoryMessage{Role: "assistant", Extra: []models.Field{
			{Key: "author", Value: []byte(`"planner"`)}, {Key: "usage", Value: []byte(`{"input_tokens":1}`)},
			{Key: "compaction", Value: []byte(`{"covers":3}`)},
			{Key: "trace_id", Value: []byte(`"t"`)}, {Key: "model", Value: []byte(`"gpt"`)}}}, "", nil},
		{"tool calls as an extra key", models.HistoryMessage{Role: "assistant", Extra: []models.Field{{Key: "tool_calls", Value: []byte(`[]`)}}},
			"tool_calls", []string{"set HistoryMessage.ToolCalls"}},
		{"tool calls on a user message", models.HistoryMessage{Role: "user", ToolCalls: []models.ToolCall{{ID: "a", Name: "f"}}},
			"tool_calls", []string{"only an assistant message makes tool calls"}},
		{"a tool call without a name", models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a"}}},
			"tool_calls[0].name", []string{"missing or empty"}},
		{"arguments that are not JSON", models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a", Name: "f", Arguments: "{q:1"}}},
			"tool_calls[0].arguments", []string{"not valid JSON"}},
		{"two calls with one id", models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a", Name: "f"}, {ID: "a", Name: "g"}}},
			"tool_calls[1].id", []string{"same id as tool_calls[0]"}},
		{"arguments with NUL", models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a", Name: "f", Arguments: `{"q":"\u0000"}`}}},
			"tool_calls[0].arguments", []string{`\u0000`}},
		{"arguments nested too deep", models.HistoryMessage{Role: "assistant", ToolCalls: []models.ToolCall{{ID: "a", Name: "f", Arguments: strings.Repeat("[", 300) + strings.Repeat("]", 300)}}},
			"tool_calls[0].arguments", []string{"nested deeper than"}},
		{"typed tool calls", models.HistoryMessage{Role: "model", ToolCalls: []models.ToolCall{{ID: "a", Name: "f", Arguments: `{"q":1}`}, {ID: "b", Name: "g"}}}, "", nil},
		{"timestamp in words", models.HistoryMessage{Role: "user", Timestamp: ts("yesterday")}, "timestamp", []string{`"yesterday" is not an ISO-8601 time`}},
		{"timestamp empty", models.HistoryMessage{Role: "user", Timestamp: ts("")}, "timestamp", []string{`"" is not an ISO-8601 time`}},
		{"timestamps Python reads", models.HistoryMessage{Role: "user", Timestamp: ts("2024-01-15T10:30:00.123456+00:00")}, "", nil},
		{"naive timestamp", models.HistoryMessage{Role: "user", Timestamp: ts("2024-01-15 10:30:00")}, "", nil},
	} {
		err := msgcheck.Messages([]models.HistoryMessage{{Role: "user", Content: "first"}, c.msg}, false)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		fe, ok := models.AsFieldError(err)
		if !ok || fe.Index != 1 || fe.Field != c.field {
			t.Errorf("%s: error %v does not name message 1, field %q", c.name, err, c.field)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.name, err, w)
			}
		}
	}
}

package remopenai

import (
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Provider is this package's name in the reasoning items it keeps.
const Provider = "openai"

// Options shapes a request.
type Options struct {
	// System, when set, is sent first as a system message. Stored system
	// messages are not sent, as in the pydantic-ai history: the
	// system prompt is the caller's.
	System string
}

// Messages is the history as Chat Completions messages: user and system
// messages as they are, each assistant message with its tool calls (stored,
// or synthesized from results that answer none, convert.Pair) followed by
// one tool message per result. A role with no OpenAI form is an error.
func Messages(history []models.HistoryMessage, o Options) ([]openai.ChatCompletionMessageParamUnion, error) {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(history)+1)
	if o.System != "" {
		out = append(out, openai.SystemMessage(o.System))
	}
	err := sdk.Walk(history, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			if m.Role != models.RoleUser {
				return sdk.Errorf(i, "role", "%q has no Chat Completions form", string(m.Role))
			}
			out = append(out, openai.UserMessage(m.Content))
			return nil
		}
		var a openai.ChatCompletionAssistantMessageParam
		if t.Assistant != nil && t.Assistant.Content != "" {
			a.Content.OfString = openai.String(t.Assistant.Content)
		}
		for _, c := range t.Calls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments}}})
		}
		if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		}
		for _, r := range t.Results {
			out = append(out, openai.ToolMessage(sdk.ResultText(r.Content), r.CallID))
		}
		return nil
	})
	return out, err
}

// FromCompletion is the assistant message to store for a completion's
// first choice: its text, its tool calls, the model and the token usage.
func FromCompletion(c *openai.ChatCompletion) (models.HistoryMessage, error) {
	if c == nil || len(c.Choices) == 0 {
		return models.HistoryMessage{}, sdk.Errorf(-1, "choices", "the completion has no choice")
	}
	msg := c.Choices[0].Message
	switch {
	case msg.Refusal != "":
		return models.HistoryMessage{}, sdk.Errorf(0, "choices[0].message.refusal", "a refusal has no place in the history: handle it before storing (%.60q)", msg.Refusal)
	case msg.Audio.ID != "":
		return models.HistoryMessage{}, sdk.Errorf(0, "choices[0].message.audio", "audio answers are not kept")
	//lint:ignore SA1019 the deprecated function_call is read only to refuse it
	case msg.FunctionCall.Name != "":
		return models.HistoryMessage{}, sdk.Errorf(0, "choices[0].message.function_call", "the deprecated function_call is not kept; use tools")
	}
	m := models.HistoryMessage{Role: models.RoleAssistant, Content: msg.Content}
	for j, tc := range msg.ToolCalls {
		if tc.Type != "function" {
			return models.HistoryMessage{}, sdk.Errorf(0, field("choices[0].message.tool_calls", j, "type"), "%q calls are not kept; only function calls", tc.Type)
		}
		call := models.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}
		if err := call.Check(); err != nil {
			fe, _ := models.AsFieldError(err)
			return models.HistoryMessage{}, sdk.Errorf(0, field("choices[0].message.tool_calls", j, fe.Field), "%s", fe.Reason)
		}
		m.ToolCalls = append(m.ToolCalls, call)
	}
	sdk.WithUsage(&m, c.Model, c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens)
	return m, nil
}

// LookupTool is the REM LOOKUP tool as a Chat Completions function tool;
// run its calls with sdk.RunLookup.
func LookupTool() openai.ChatCompletionToolUnionParam {
	return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
		Name: sdk.LookupToolName, Description: openai.String(sdk.LookupToolDescription),
		Parameters: shared.FunctionParameters(sdk.LookupToolParameters())})
}

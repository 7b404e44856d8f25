package remopenai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// InputItems is the history as Responses input items: user and system
// messages as easy input messages, an assistant message as its reasoning
// items (their id and encrypted content, as the response gave them), its
// text as an assistant message and its calls as function_call items, each
// result as a function_call_output. Options.System belongs in the request's
// Instructions; here it is sent as a first system message.
func InputItems(history []models.HistoryMessage, o Options) (responses.ResponseInputParam, error) {
	out := make(responses.ResponseInputParam, 0, len(history)+1)
	if o.System != "" {
		out = append(out, responses.ResponseInputItemParamOfMessage(o.System, responses.EasyInputMessageRoleSystem))
	}
	err := sdk.Walk(history, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			if m.Role != models.RoleUser {
				return sdk.Errorf(i, "role", "%q has no Responses form", string(m.Role))
			}
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
			return nil
		}
		if t.Assistant != nil {
			rs, err := sdk.ReasoningFor(i, t, Provider)
			if err != nil {
				return err
			}
			for _, v := range rs {
				// By its id and the encrypted content OpenAI issued; the
				// summary is display text, sent back empty.
				r := responses.ResponseReasoningItemParam{ID: v.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
				if v.Seal != "" {
					r.EncryptedContent = openai.String(v.Seal)
				}
				out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &r})
			}
			if t.View.Text != "" {
				out = append(out, responses.ResponseInputItemParamOfMessage(t.View.Text, responses.EasyInputMessageRoleAssistant))
			}
		}
		for _, c := range t.Calls {
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
		}
		for _, r := range t.Results {
			out = append(out, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
				CallID: openai.String(r.CallID), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(sdk.ResultText(r.Content))}}})
		}
		return nil
	})
	return out, err
}

// FromResponse is the assistant message to store for a response: the text
// of its message items, its function calls, its reasoning items by id and
// encrypted content, without their summary text (ReasoningKey, provider
// "openai"), the model and usage. Any other output
// item (a built-in tool's call) is refused, naming it.
func FromResponse(r *responses.Response) (models.HistoryMessage, error) {
	if r == nil {
		return models.HistoryMessage{}, sdk.Errorf(-1, "output", "no response")
	}
	m := models.HistoryMessage{Role: models.RoleAssistant}
	var texts []string
	var reasoning []json.RawMessage
	for j, it := range r.Output {
		switch it.Type {
		case "message":
			for k, c := range it.Content {
				if c.Type != "output_text" {
					return models.HistoryMessage{}, sdk.Errorf(-1, field("output", j, "content")+field("", k, "type"), "%q content is not kept", c.Type)
				}
				texts = append(texts, c.Text)
			}
		case "function_call":
			fc := it.AsFunctionCall()
			call := models.ToolCall{ID: fc.CallID, Name: fc.Name, Arguments: fc.Arguments}
			if err := call.Check(); err != nil {
				fe, _ := models.AsFieldError(err)
				return models.HistoryMessage{}, sdk.Errorf(-1, field("output", j, fe.Field), "%s", fe.Reason)
			}
			m.ToolCalls = append(m.ToolCalls, call)
		case "reasoning":
			// What OpenAI issued and checks: the id and the encrypted
			// content (package visible). The summary is free text the
			// provider does not check; it is not kept.
			r := it.AsReasoning()
			item := map[string]any{"type": "reasoning", "id": r.ID, "summary": []any{}}
			if r.EncryptedContent != "" {
				item["encrypted_content"] = r.EncryptedContent
			}
			b, _ := json.Marshal(item)
			reasoning = append(reasoning, b)
		default:
			return models.HistoryMessage{}, sdk.Errorf(-1, field("output", j, "type"), "%q items are not kept; only message, function_call and reasoning", it.Type)
		}
	}
	m.Content = strings.Join(texts, "")
	sdk.WithReasoning(&m, Provider, reasoning)
	sdk.WithUsage(&m, r.Model, r.Usage.InputTokens, r.Usage.OutputTokens, r.Usage.TotalTokens)
	return m, nil
}

// ResponsesLookupTool is the REM LOOKUP tool as a Responses function tool.
func ResponsesLookupTool() responses.ToolUnionParam {
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name: sdk.LookupToolName, Description: openai.String(sdk.LookupToolDescription),
		Parameters: sdk.LookupToolParameters(), Strict: openai.Bool(false)}}
}

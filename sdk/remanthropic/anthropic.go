package remanthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Provider is this package's name in the reasoning items it keeps.
const Provider = "anthropic"

// Options shapes a request.
type Options struct {
	// System, when set, is the system block (the API takes the system
	// prompt apart). Stored system messages are not sent, as in the
	// pydantic-ai history: the system prompt is the caller's.
	System string
}

// Messages is the history as a Messages API request: the system blocks,
// and the messages, each assistant message as its thinking blocks, its
// text and one tool_use block per call (stored, or synthesized from results
// that answer none, convert.Pair), its results as one user message of
// tool_result blocks. A role with no Anthropic form is an error.
func Messages(history []models.HistoryMessage, o Options) ([]anthropic.TextBlockParam, []anthropic.MessageParam, error) {
	var system []anthropic.TextBlockParam
	if o.System != "" {
		system = append(system, anthropic.TextBlockParam{Text: o.System})
	}
	out := make([]anthropic.MessageParam, 0, len(history))
	err := sdk.Walk(history, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			if m.Role != models.RoleUser {
				return sdk.Errorf(i, "role", "%q has no Anthropic form", string(m.Role))
			}
			if m.Content != "" { // the API refuses an empty text block
				out = append(out, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
			}
			return nil
		}
		var blocks []anthropic.ContentBlockParamUnion
		if t.Assistant != nil {
			rs, err := sdk.ReasoningFor(i, t, Provider)
			if err != nil {
				return err
			}
			for _, r := range rs {
				if r.Kind == "redacted_thinking" {
					blocks = append(blocks, anthropic.NewRedactedThinkingBlock(r.Seal))
				} else {
					blocks = append(blocks, anthropic.NewThinkingBlock(r.Seal, r.Text))
				}
			}
			if t.View.Text != "" {
				blocks = append(blocks, anthropic.NewTextBlock(t.View.Text))
			}
		}
		for _, c := range t.Calls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, json.RawMessage(convert.ArgsObject(c)), c.Name))
		}
		if len(blocks) > 0 {
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		}
		if len(t.Results) > 0 {
			results := make([]anthropic.ContentBlockParamUnion, len(t.Results))
			for k, r := range t.Results {
				results[k] = anthropic.NewToolResultBlock(r.CallID, sdk.ResultText(r.Content), false)
			}
			out = append(out, anthropic.NewUserMessage(results...))
		}
		return nil
	})
	return system, out, err
}

// FromMessage is the assistant message to store for a response: its text,
// its tool_use blocks as tool calls (input kept as the JSON the model
// wrote), its thinking blocks as Anthropic signed them (type, thinking,
// signature; redacted ones by their data), the model and usage.
func FromMessage(r *anthropic.Message) (models.HistoryMessage, error) {
	if r == nil {
		return models.HistoryMessage{}, sdk.Errorf(-1, "content", "no message")
	}
	m := models.HistoryMessage{Role: models.RoleAssistant}
	var texts []string
	var reasoning []json.RawMessage
	for j, b := range r.Content {
		at := func(k string) string { return fmt.Sprintf("content[%d].%s", j, k) }
		switch b.Type {
		case "text":
			if len(b.Citations) > 0 {
				return models.HistoryMessage{}, sdk.Errorf(-1, at("citations"), "citations are not kept")
			}
			texts = append(texts, b.Text)
		case "thinking":
			// Kept with its signature, which covers the text (package
			// visible); Anthropic signs every thinking block it sends.
			if b.Signature != "" {
				item, _ := json.Marshal(map[string]string{"type": b.Type, "thinking": b.Thinking, "signature": b.Signature})
				reasoning = append(reasoning, item)
			}
		case "redacted_thinking":
			item, _ := json.Marshal(map[string]string{"type": b.Type, "data": b.Data})
			reasoning = append(reasoning, item)
		case "tool_use":
			call := models.ToolCall{ID: b.ID, Name: b.Name, Arguments: strings.TrimSpace(string(b.Input))}
			if err := call.Check(); err != nil {
				fe, _ := models.AsFieldError(err)
				return models.HistoryMessage{}, sdk.Errorf(-1, at(fe.Field), "%s", fe.Reason)
			}
			if _, ok := call.ArgumentsObject(); !ok {
				return models.HistoryMessage{}, sdk.Errorf(-1, at("input"), "must be a JSON object")
			}
			m.ToolCalls = append(m.ToolCalls, call)
		default:
			return models.HistoryMessage{}, sdk.Errorf(-1, at("type"), "%q blocks are not kept; only text, thinking and tool_use", b.Type)
		}
	}
	m.Content = strings.Join(texts, "")
	sdk.WithReasoning(&m, Provider, reasoning)
	sdk.WithUsage(&m, string(r.Model), r.Usage.InputTokens, r.Usage.OutputTokens, 0)
	return m, nil
}

// LookupTool is the REM LOOKUP tool as an Anthropic tool.
func LookupTool() anthropic.ToolUnionParam {
	p := sdk.LookupToolParameters()
	return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: sdk.LookupToolName,
		Description: anthropic.String(sdk.LookupToolDescription),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: p["properties"], Required: []string{"key"}}}}
}

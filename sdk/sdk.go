package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// The REM LOOKUP tool every adapter offers under its SDK's tool type, as
// the MCP server offers it.
const (
	LookupToolName        = compressor.LookupToolName
	LookupToolDescription = compressor.LookupToolDescription
)

// LookupToolParameters is the tool's JSON Schema: {"key": string}, required.
func LookupToolParameters() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"key": map[string]any{"type": "string", "description": "the key after REM LOOKUP, e.g. session-<uuid>-msg-3"},
		},
		"required": []string{"key"},
	}
}

// RunLookup runs the REM LOOKUP tool: arguments is the call's JSON text
// ({"key": "..."}). What it returns is the tool result for the model: the
// full text, or a sentence saying why there is none (a model reads it and
// goes on; a store failure is the error).
func RunLookup(ctx context.Context, st Store, arguments string) (string, error) {
	var a struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal([]byte(arguments), &a); err != nil || strings.TrimSpace(a.Key) == "" {
		return `rem_lookup needs {"key": "<the key after REM LOOKUP>"}`, nil
	}
	full, err := st.Lookup(ctx, a.Key)
	switch {
	case err == nil:
		return full, nil
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrBadRequest):
		return fmt.Sprintf("no message for key %q: %v", a.Key, err), nil
	}
	return "", err
}

// HandleLookup runs c when it calls the REM LOOKUP tool and returns the
// tool message to store; ok is false for a call to any other tool.
func HandleLookup(ctx context.Context, st Store, c models.ToolCall) (m models.HistoryMessage, ok bool, err error) {
	if c.Name != LookupToolName {
		return m, false, nil
	}
	out, err := RunLookup(ctx, st, c.Arguments)
	if err != nil {
		return m, true, err
	}
	return ToolResult(c, out), true, nil
}

// ToolResult is the message to store for a call's result: role tool, the
// call's id and name, its arguments (as tool_arguments, which the Python service's
// pydantic-ai history reads), content as the tool returned it.
func ToolResult(call models.ToolCall, content string) models.HistoryMessage {
	m := models.HistoryMessage{Role: models.RoleTool, Content: content, ToolCallID: call.ID, ToolName: call.Name}
	if obj, ok := call.ArgumentsObject(); ok && call.Arguments != "" {
		m.ToolArguments = obj
	}
	return m
}

// ResultFor is the tool message answering the call callID of answer: the
// call must be one the answer made (a tool result without its call is an
// error naming the id, before anything is stored).
func ResultFor(answer models.HistoryMessage, callID, content string) (models.HistoryMessage, error) {
	for _, c := range answer.ToolCalls {
		if c.ID == callID {
			return ToolResult(c, content), nil
		}
	}
	return models.HistoryMessage{}, Errorf(-1, "tool_call_id", "the answer made no call %q: a tool result needs its call", callID)
}

// Walk is convert.Walk: the one grouping of a history into user messages
// and turns (an assistant message with its calls and the results that
// answer them) that every adapter maps.
var Walk = convert.Walk

// ReasoningFor is what an adapter for provider sends back beside turn's
// answer: the reasoning of the answer's view (visible.Of), in the forms the
// provider issued. A stored item the view withholds (free text, a part
// that is not a thought) is an error naming it: the adapter refuses the
// history rather than send what no view shows. i is the turn's position.
func ReasoningFor(i int, t *convert.Turn, provider string) ([]visible.Reasoning, error) {
	for _, w := range t.View.Withheld {
		if visible.Under(w.Field, visible.ReasoningKey) {
			return nil, Errorf(i, w.Field, "%s", w.Reason)
		}
	}
	return t.View.ReasoningFor(provider), nil
}

// Reasoning returns the items of provider that m carries (ReasoningKey),
// as stored. The adapters send ReasoningFor's, the view's, instead.
func Reasoning(m *models.HistoryMessage, provider string) ([]json.RawMessage, error) {
	raw, ok := m.ExtraRaw(visible.ReasoningKey)
	if !ok {
		return nil, nil
	}
	var items []struct {
		Provider string          `json:"provider"`
		Item     json.RawMessage `json:"item"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &models.FieldError{Index: -1, Field: visible.ReasoningKey, Reason: "must be a list of {provider, item}"}
	}
	var out []json.RawMessage
	for _, it := range items {
		if it.Provider == provider {
			out = append(out, it.Item)
		}
	}
	return out, nil
}

// WithReasoning adds items of provider to m under ReasoningKey.
func WithReasoning(m *models.HistoryMessage, provider string, items []json.RawMessage) {
	if len(items) == 0 {
		return
	}
	list := make([]map[string]any, len(items))
	for i, it := range items {
		list[i] = map[string]any{"provider": provider, "item": it}
	}
	b, _ := json.Marshal(list)
	m.Extra = append(m.Extra, models.Field{Key: visible.ReasoningKey, Value: b})
}

// WithUsage adds usage (input and output tokens; total when known) and the
// model name to an answer, the keys SessionUsage and the viewer read.
func WithUsage(m *models.HistoryMessage, model string, input, output, total int64) {
	if model != "" {
		m.Extra = append(m.Extra, models.Field{Key: "model", Value: models.AppendJSONString(nil, model)})
	}
	if input == 0 && output == 0 && total == 0 {
		return
	}
	u := map[string]int64{"input_tokens": input, "output_tokens": output}
	if total > 0 {
		u["total_tokens"] = total
	}
	b, _ := json.Marshal(u)
	m.Extra = append(m.Extra, models.Field{Key: "usage", Value: b})
}

// Errorf is the error of a mapping: which message (its position in the
// history or response) and which part, and why.
func Errorf(index int, field, format string, a ...any) error {
	return &models.FieldError{Index: index, Field: field, Reason: fmt.Sprintf(format, a...)}
}

package remlangchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/schema"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Provider is this package's name in the reasoning items it keeps.
const Provider = "langchaingo"

// Options shapes a request.
type Options struct {
	// System, when set, is sent first as a system message. Stored system
	// messages are not sent, as in the pydantic-ai history.
	System string
}

// MessageContents is the history as langchaingo messages: human and system
// text, each assistant message as an AI message of its text and one
// ToolCall part per call (stored, or synthesized from results that answer
// none, convert.Pair), each result as a tool message of one
// ToolCallResponse (langchaingo's providers read one per message).
func MessageContents(history []models.HistoryMessage, o Options) ([]llms.MessageContent, error) {
	out := make([]llms.MessageContent, 0, len(history)+1)
	if o.System != "" {
		out = append(out, llms.TextParts(llms.ChatMessageTypeSystem, o.System))
	}
	err := sdk.Walk(history, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			if m.Role != models.RoleUser {
				return sdk.Errorf(i, "role", "%q has no langchaingo form", string(m.Role))
			}
			out = append(out, llms.TextParts(llms.ChatMessageTypeHuman, m.Content))
			return nil
		}
		ai := llms.MessageContent{Role: llms.ChatMessageTypeAI}
		if t.Assistant != nil && t.Assistant.Content != "" {
			ai.Parts = append(ai.Parts, llms.TextContent{Text: t.Assistant.Content})
		}
		for _, c := range t.Calls {
			ai.Parts = append(ai.Parts, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		if len(ai.Parts) > 0 {
			out = append(out, ai)
		}
		for _, r := range t.Results {
			out = append(out, llms.MessageContent{Role: llms.ChatMessageTypeTool,
				Parts: []llms.ContentPart{llms.ToolCallResponse{ToolCallID: r.CallID, Name: r.Name, Content: sdk.ResultText(r.Content)}}})
		}
		return nil
	})
	return out, err
}

// FromChoice is the assistant message to store for a generated choice: its
// text and tool calls, its ReasoningContent kept, and the model and token
// usage where the provider reported them in GenerationInfo.
func FromChoice(c *llms.ContentChoice) (models.HistoryMessage, error) {
	if c == nil {
		return models.HistoryMessage{}, sdk.Errorf(-1, "choice", "no choice")
	}
	if c.FuncCall != nil && len(c.ToolCalls) == 0 {
		return models.HistoryMessage{}, sdk.Errorf(-1, "FuncCall", "the deprecated function call is not kept; use tools")
	}
	m := models.HistoryMessage{Role: models.RoleAssistant, Content: c.Content}
	for j, tc := range c.ToolCalls {
		if tc.FunctionCall == nil {
			return models.HistoryMessage{}, sdk.Errorf(-1, fmt.Sprintf("ToolCalls[%d].FunctionCall", j), "missing")
		}
		call := models.ToolCall{ID: tc.ID, Name: tc.FunctionCall.Name, Arguments: tc.FunctionCall.Arguments}
		if err := call.Check(); err != nil {
			fe, _ := models.AsFieldError(err)
			return models.HistoryMessage{}, sdk.Errorf(-1, fmt.Sprintf("ToolCalls[%d].%s", j, fe.Field), "%s", fe.Reason)
		}
		m.ToolCalls = append(m.ToolCalls, call)
	}
	if c.ReasoningContent != "" {
		b, _ := json.Marshal(map[string]string{"reasoning_content": c.ReasoningContent})
		sdk.WithReasoning(&m, Provider, []json.RawMessage{b})
	}
	info := func(k string) int64 {
		switch v := c.GenerationInfo[k].(type) {
		case int:
			return int64(v)
		case int64:
			return v
		case float64:
			return int64(v)
		}
		return 0
	}
	model, _ := c.GenerationInfo["Model"].(string)
	sdk.WithUsage(&m, model, info("PromptTokens"), info("CompletionTokens"), info("TotalTokens"))
	return m, nil
}

// LookupTool is the REM LOOKUP tool as a langchaingo tool.
func LookupTool() llms.Tool {
	return llms.Tool{Type: "function", Function: &llms.FunctionDefinition{Name: sdk.LookupToolName,
		Description: sdk.LookupToolDescription, Parameters: sdk.LookupToolParameters()}}
}

// History is a langchaingo chat message history kept in a remstore session.
// Each Add stores one message at once; Messages loads the session (long
// answers cut to their REM LOOKUP hint). A ToolChatMessage carries only its
// call id: its tool name comes from the AI message that made the call.
type History struct {
	st      sdk.Store
	session string
	mu      sync.Mutex
	names   map[string]models.ToolCall // call id -> call, from stored AI messages
}

var _ schema.ChatMessageHistory = (*History)(nil)

// NewHistory returns the history of session in st.
func NewHistory(st sdk.Store, session string) *History {
	return &History{st: st, session: session, names: map[string]models.ToolCall{}}
}

// AddMessage stores one langchaingo message.
func (h *History) AddMessage(ctx context.Context, msg llms.ChatMessage) error {
	m, err := h.toHistory(ctx, msg)
	if err != nil {
		return err
	}
	_, err = h.st.Append(ctx, h.session, []models.HistoryMessage{m})
	return err
}

// AddUserMessage stores a human message.
func (h *History) AddUserMessage(ctx context.Context, text string) error {
	return h.AddMessage(ctx, llms.HumanChatMessage{Content: text})
}

// AddAIMessage stores an AI message without tool calls.
func (h *History) AddAIMessage(ctx context.Context, text string) error {
	return h.AddMessage(ctx, llms.AIChatMessage{Content: text})
}

// Clear soft-deletes the session's messages (kept for audit).
func (h *History) Clear(ctx context.Context) error {
	_, err := h.st.Clear(ctx, h.session)
	if errors.Is(err, sdk.ErrNotFound) {
		return nil // nothing to clear
	}
	return err
}

// SetMessages replaces the session's messages: a clear, then one store of
// them all (two calls: a reader in between sees the session empty).
func (h *History) SetMessages(ctx context.Context, msgs []llms.ChatMessage) error {
	hist := make([]models.HistoryMessage, 0, len(msgs))
	for i, msg := range msgs {
		m, err := h.toHistory(ctx, msg)
		if err != nil {
			if fe, ok := models.AsFieldError(err); ok {
				fe.Index = i
			}
			return err
		}
		hist = append(hist, m)
	}
	if err := h.Clear(ctx); err != nil {
		return err
	}
	if len(hist) == 0 {
		return nil
	}
	_, err := h.st.Append(ctx, h.session, hist)
	return err
}

// Messages loads the session as langchaingo messages.
func (h *History) Messages(ctx context.Context) ([]llms.ChatMessage, error) {
	loaded, err := h.st.Load(ctx, h.session)
	if err != nil {
		return nil, err
	}
	hist := loaded.Messages
	var out []llms.ChatMessage
	err = convert.WalkAll(hist, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			switch m.Role {
			case models.RoleUser:
				out = append(out, llms.HumanChatMessage{Content: m.Content})
			case models.RoleSystem:
				out = append(out, llms.SystemChatMessage{Content: m.Content})
			default:
				return sdk.Errorf(i, "role", "%q has no langchaingo form", string(m.Role))
			}
			return nil
		}
		ai := llms.AIChatMessage{}
		if t.Assistant != nil {
			ai.Content = t.Assistant.Content
		}
		h.mu.Lock()
		for _, c := range t.Calls { // WalkAll: every stored call, answered or not
			h.names[c.ID] = c
			ai.ToolCalls = append(ai.ToolCalls, llms.ToolCall{ID: c.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
		h.mu.Unlock()
		if ai.Content != "" || len(ai.ToolCalls) > 0 {
			out = append(out, ai)
		}
		for _, r := range t.Results {
			out = append(out, llms.ToolChatMessage{ID: r.CallID, Content: r.Content})
		}
		return nil
	})
	return out, err
}

func (h *History) toHistory(ctx context.Context, msg llms.ChatMessage) (models.HistoryMessage, error) {
	switch v := msg.(type) {
	case llms.HumanChatMessage:
		return models.HistoryMessage{Role: models.RoleUser, Content: v.Content}, nil
	case llms.SystemChatMessage:
		return models.HistoryMessage{Role: models.RoleSystem, Content: v.Content}, nil
	case llms.AIChatMessage:
		m, err := FromChoice(&llms.ContentChoice{Content: v.Content, ToolCalls: v.ToolCalls, FuncCall: v.FunctionCall, ReasoningContent: v.ReasoningContent})
		if err != nil {
			return m, err
		}
		h.mu.Lock()
		for _, c := range m.ToolCalls {
			h.names[c.ID] = c
		}
		h.mu.Unlock()
		return m, nil
	case llms.ToolChatMessage:
		h.mu.Lock()
		c, ok := h.names[v.ID]
		h.mu.Unlock()
		if !ok {
			if _, err := h.Messages(ctx); err != nil { // learns the session's calls
				return models.HistoryMessage{}, err
			}
			h.mu.Lock()
			c, ok = h.names[v.ID]
			h.mu.Unlock()
		}
		if !ok {
			return models.HistoryMessage{}, sdk.Errorf(-1, "tool_call_id", "no AI message of the session called %q: a tool result needs its call", v.ID)
		}
		return sdk.ToolResult(c, v.Content), nil
	}
	return models.HistoryMessage{}, sdk.Errorf(-1, "type", "%T (%s) has no remstore form", msg, msg.GetType())
}

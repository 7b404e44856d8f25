package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
	"github.com/remstore/remstore/visible"
)

// Store is where a Go agent keeps its conversation. Load returns the
// history as the next request needs it: long answers cut to their REM
// LOOKUP hint, tool calls, usage, model and reasoning included (a load with
// extras). Append stores one turn's messages, all or none. Lookup returns
// the full text behind a key. Clear soft-deletes the session's messages
// (they stay in the table for audit; their keys find nothing after).
type Store interface {
	Load(ctx context.Context, session string) ([]models.HistoryMessage, error)
	Append(ctx context.Context, session string, msgs []models.HistoryMessage) error
	Lookup(ctx context.Context, key string) (string, error)
	Clear(ctx context.Context, session string) error
}

// Guarded is a Store that can refuse to interleave two turns: LoadAt also
// says the session's last message, and AppendIf stores only while the
// session's last message is still expectLast (sessionstore.Empty for none),
// answering the new last one; when the session moved on it stores nothing
// and the error is ErrMoved. Library and the client's Agent are Guarded, and
// RunTurn uses it whenever the store is.
type Guarded interface {
	Store
	LoadAt(ctx context.Context, session string) (history []models.HistoryMessage, last string, err error)
	AppendIf(ctx context.Context, session string, msgs []models.HistoryMessage, expectLast string) (last string, err error)
}

// ErrMoved is a guarded append refused because another turn wrote to the
// session since it was loaded (errors.Is, through the library and the
// client alike): load again, then run the turn again or store on top.
var ErrMoved = sessionstore.ErrMoved

// Library is a Store on the library: every call goes to st.
func Library(st *sessionstore.Store) Guarded { return library{st} }

type library struct{ st *sessionstore.Store }

func (l library) LoadAt(ctx context.Context, session string) ([]models.HistoryMessage, string, error) {
	var last string
	h, err := l.st.Load(ctx, session, sessionstore.LoadOptions{Extras: true, OnLast: func(v string) { last = v }})
	return h, last, err
}

func (l library) AppendIf(ctx context.Context, session string, msgs []models.HistoryMessage, expectLast string) (string, error) {
	res, err := l.st.StoreWith(ctx, session, msgs, sessionstore.StoreOptions{ExpectLast: expectLast})
	return res.Last, err
}

func (l library) Load(ctx context.Context, session string) ([]models.HistoryMessage, error) {
	return l.st.Load(ctx, session, sessionstore.LoadOptions{Extras: true})
}

func (l library) Append(ctx context.Context, session string, msgs []models.HistoryMessage) error {
	_, err := l.st.StoreMessages(ctx, session, msgs, "")
	return err
}

func (l library) Clear(ctx context.Context, session string) error {
	_, err := l.st.ClearMessages(ctx, session)
	if errors.Is(err, sessionstore.ErrNotFound) {
		return nil // nothing to clear
	}
	return err
}

func (l library) Lookup(ctx context.Context, key string) (string, error) {
	return l.st.Lookup(ctx, key)
}

// RecordCall writes the call to the session's audit dump when
// DEBUG_AUDIT_SESSION is set (settings: the process environment, read at
// each call; DEBUG_AUDIT_DIR says where).
func (l library) RecordCall(ctx context.Context, session string, r CallRecord) error {
	cfg, err := settings.Load(settings.Options{NoDotEnv: true})
	if err != nil || !cfg.AuditEnabled {
		return err
	}
	if r.CallID == "" {
		r.CallID = audit.NewCallID()
	}
	// The dump is named by the session's UUID, never by the name as given:
	// another tenant's session may be named alike.
	sid, err := l.st.ResolveID(ctx, session)
	if err != nil {
		return err
	}
	return audit.Append(ctx, cfg.AuditDir, sid.String(), audit.Invocation{Timestamp: r.Timestamp, Prompt: r.Prompt, RawSessionHistory: r.History, Exchange: r.Exchange})
}

// The REM LOOKUP tool every adapter offers under its SDK's tool type, as
// the MCP server offers it.
const (
	LookupToolName        = sessionstore.LookupToolName
	LookupToolDescription = sessionstore.LookupToolDescription
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
	case errors.Is(err, sessionstore.ErrNotFound), isFieldError(err):
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

func isFieldError(err error) bool { _, ok := models.AsFieldError(err); return ok }

// ToolResult is the message to store for a call's result: role tool, the
// call's id and name, its arguments (as tool_arguments, which the peer's
// pydantic-ai history reads), content as the tool returned it.
func ToolResult(call models.ToolCall, content string) models.HistoryMessage {
	m := models.HistoryMessage{Role: models.RoleTool, Content: content, ToolCallID: call.ID, ToolName: call.Name}
	if obj, ok := call.ArgumentsObject(); ok && call.Arguments != "" {
		m.ToolArguments = obj
	}
	return m
}

// DefaultMaxRounds bounds the model calls of one RunTurn.
const DefaultMaxRounds = 8

// Asker is one model call: the request built from the history with an
// adapter, sent with its SDK, the answer mapped back (remopenai.FromCompletion,
// remanthropic.FromMessage, ...).
type Asker func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error)

// Tooler runs one tool call and returns the message to store for it
// (ToolResult, or remgenai.ToolResult for an object).
type Tooler func(ctx context.Context, call models.ToolCall) (models.HistoryMessage, error)

// RunTurn is one turn of an agent, whatever the SDK: it stores prompt as the
// user's message, then, until the model answers without a tool call (at most
// DefaultMaxRounds calls), loads the session, asks the model, runs each call
// (rem_lookup itself, the others through tool) and stores the answer with its
// results in one Append, all or nothing. It returns the last answer.
//
// On a Guarded store every append names the last message the turn saw, so
// a second turn racing on the session fails with ErrMoved rather than
// weave its messages into this one's.
func RunTurn(ctx context.Context, st Store, session, prompt string, ask Asker, tool Tooler) (models.HistoryMessage, error) {
	g, guarded := st.(Guarded)
	last := ""
	appendTurn := func(msgs []models.HistoryMessage) error {
		if !guarded {
			return st.Append(ctx, session, msgs)
		}
		var err error
		last, err = g.AppendIf(ctx, session, msgs, last)
		return err
	}
	load := func() ([]models.HistoryMessage, error) {
		if !guarded {
			return st.Load(ctx, session)
		}
		h, now, err := g.LoadAt(ctx, session)
		if err == nil && last != "" && now != last { // someone wrote since this turn's own append
			err = &sessionstore.MovedError{Expected: last, Last: now}
		}
		last = now
		return h, err
	}
	if guarded {
		if _, err := load(); err != nil {
			return models.HistoryMessage{}, err
		}
	}
	if err := appendTurn([]models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
		return models.HistoryMessage{}, err
	}
	rec, _ := st.(Recorder)
	for range DefaultMaxRounds {
		history, err := load()
		if err != nil {
			return models.HistoryMessage{}, err
		}
		answer, err := askRecorded(ctx, rec, session, prompt, ask, history)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		turn := []models.HistoryMessage{answer}
		for _, c := range answer.ToolCalls {
			m, ok, err := HandleLookup(ctx, st, c)
			if !ok {
				m, err = tool(ctx, c)
			}
			if err != nil {
				return models.HistoryMessage{}, fmt.Errorf("tool %s (call %s): %w", c.Name, c.ID, err)
			}
			turn = append(turn, m)
		}
		if err := appendTurn(turn); err != nil {
			return models.HistoryMessage{}, err
		}
		if len(answer.ToolCalls) == 0 {
			return answer, nil
		}
	}
	return models.HistoryMessage{}, fmt.Errorf("no answer without a tool call after %d model calls", DefaultMaxRounds)
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
	raw, ok := m.ExtraRaw(sessionstore.ReasoningKey)
	if !ok {
		return nil, nil
	}
	var items []struct {
		Provider string          `json:"provider"`
		Item     json.RawMessage `json:"item"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, &models.FieldError{Index: -1, Field: sessionstore.ReasoningKey, Reason: "must be a list of {provider, item}"}
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
	m.Extra = append(m.Extra, models.Field{Key: sessionstore.ReasoningKey, Value: b})
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

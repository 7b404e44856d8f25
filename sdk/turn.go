package sdk

import (
	"context"
	"fmt"

	"github.com/remstore/remstore/models"
)

// DefaultMaxRounds bounds the model calls of one turn when Turn.MaxRounds
// is 0.
const DefaultMaxRounds = 8

// Asker is one model call: the request built from the history with an
// adapter, sent with its SDK, the answer mapped back. Each adapter's Ask
// makes one (remopenai.Ask, remanthropic.Ask, ...).
type Asker func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error)

// Tooler runs one tool call and returns the message to store for it
// (ToolResult, or remgenai.ToolResult for an object).
type Tooler func(ctx context.Context, call models.ToolCall) (models.HistoryMessage, error)

// Turn is one turn of an agent, whatever the model SDK: the user's prompt,
// then model calls until the model answers without a tool call.
type Turn struct {
	Store   Store
	Session string
	Ask     Asker
	// Tool runs each call but rem_lookup's (which the turn runs itself);
	// nil refuses any other call.
	Tool Tooler
	// Agent names the agent: stored as each answer's author (unless the
	// answer names one) and in the audit record of each model call.
	Agent string
	// LastN > 0 gives the model only the last LastN messages of the
	// stored history (tool pairs whole), then the turn's own.
	LastN int
	// MaxRounds bounds the model calls (0: DefaultMaxRounds).
	MaxRounds int
}

// RunTurn is Turn{Store: st, Session: session, Ask: ask, Tool: tool}.Run.
func RunTurn(ctx context.Context, st Store, session, prompt string, ask Asker, tool Tooler) (models.HistoryMessage, error) {
	return Turn{Store: st, Session: session, Ask: ask, Tool: tool}.Run(ctx, prompt)
}

// Run runs the turn and returns the model's last answer. The prompt is
// stored with the first answer and its tool results, in one append, and
// each later answer with its results in one more: every append is guarded
// by the last message the turn saw, so of two turns racing on a session
// one stores and the other stores nothing at all (its error is ErrMoved).
// A model error stores nothing either. Through serve, an answer the store
// could not be sent within the context's deadline is in the error's
// Pending (client.Error), to store later.
func (t Turn) Run(ctx context.Context, prompt string) (models.HistoryMessage, error) {
	if t.Store == nil || t.Ask == nil {
		return models.HistoryMessage{}, &models.FieldError{Index: -1, Field: "turn", Reason: "needs a Store and an Ask"}
	}
	h, err := t.Store.Load(ctx, t.Session, LoadOptions{LastN: t.LastN})
	if err != nil {
		return models.HistoryMessage{}, err
	}
	last := h.Last
	pending := []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}
	history := append(h.Messages, pending...)
	rec, _ := t.Store.(Recorder)
	rounds := t.MaxRounds
	if rounds <= 0 {
		rounds = DefaultMaxRounds
	}
	own := 0 // messages this turn stored
	for range rounds {
		answer, call, err := askTimed(ctx, rec, t.Agent, prompt, t.Ask, history)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		if _, named := answer.ExtraString("author"); t.Agent != "" && !named {
			answer.Extra = append(answer.Extra, models.Field{Key: "author", Value: models.AppendJSONString(nil, t.Agent)})
		}
		batch, err := t.results(ctx, answer)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		res, err := t.Store.Append(ctx, t.Session, append(pending, batch...), AppendOptions{IfLast: last})
		record(ctx, rec, t.Session, call)
		if err != nil {
			return answer, err
		}
		if len(answer.ToolCalls) == 0 {
			return answer, nil
		}
		own += len(pending) + len(batch)
		pending, last = nil, res.Last
		if history, err = t.reload(ctx, last, own); err != nil {
			return answer, err
		}
	}
	return models.HistoryMessage{}, fmt.Errorf("no answer without a tool call after %d model calls", rounds)
}

// results is the answer followed by the result of each of its calls.
func (t Turn) results(ctx context.Context, answer models.HistoryMessage) ([]models.HistoryMessage, error) {
	out := []models.HistoryMessage{answer}
	for _, c := range answer.ToolCalls {
		m, ok, err := HandleLookup(ctx, t.Store, c)
		if !ok {
			if t.Tool == nil {
				err = fmt.Errorf("no Tool to run it")
			} else {
				m, err = t.Tool(ctx, c)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("tool %s (call %s): %w", c.Name, c.ID, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// reload is the history the next model call is given: the session as
// stored, which must still end with the turn's own last message. With
// LastN, the turn's own messages (own) come on top: a model never loses
// the start of the turn it is in.
func (t Turn) reload(ctx context.Context, last string, own int) ([]models.HistoryMessage, error) {
	n := 0
	if t.LastN > 0 {
		n = t.LastN + own
	}
	h, err := t.Store.Load(ctx, t.Session, LoadOptions{LastN: n})
	if err == nil && h.Last != last { // someone wrote since this turn's own append
		err = &models.MovedError{Expected: last, Last: h.Last}
	}
	return h.Messages, err
}

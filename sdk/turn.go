package sdk

import (
	"context"
	"fmt"
	"slices"

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

// Run runs the turn and returns the model's last answer. The whole turn
// (the prompt, each answer and its tool results) is stored in one append
// once the model answers without a tool call, guarded by the last message
// the turn loaded: of two turns racing on a session, one stores and the
// other stores nothing at all (its error is ErrMoved), however many model
// calls either made. Within the turn the model is given the loaded history
// and the turn's own messages as they came. A model or tool error stores
// nothing; a turn still calling tools after MaxRounds stores what it has
// and says so. Through serve, a store the client gave up on (past its
// StoreWindow, or when ctx ended) comes back as a *client.Error whose
// Pending holds the turn, to store later.
func (t Turn) Run(ctx context.Context, prompt string) (models.HistoryMessage, error) {
	if t.Store == nil || t.Ask == nil {
		return models.HistoryMessage{}, &models.FieldError{Index: -1, Field: "turn", Reason: "needs a Store and an Ask"}
	}
	h, err := t.Store.Load(ctx, t.Session, LoadOptions{LastN: t.LastN})
	if err != nil {
		return models.HistoryMessage{}, err
	}
	turn := []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}
	rec, _ := t.Store.(Recorder)
	var calls []*CallRecord
	rounds := t.MaxRounds
	if rounds <= 0 {
		rounds = DefaultMaxRounds
	}
	for range rounds {
		history := append(slices.Clip(h.Messages), turn...)
		answer, call, err := askTimed(ctx, rec, t.Agent, prompt, t.Ask, history)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		calls = append(calls, call)
		if _, named := answer.ExtraString("author"); t.Agent != "" && !named {
			answer.Extra = append(answer.Extra, models.Field{Key: "author", Value: models.AppendJSONString(nil, t.Agent)})
		}
		batch, err := t.results(ctx, answer)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		turn = append(turn, batch...)
		if len(answer.ToolCalls) == 0 {
			return answer, t.store(ctx, rec, h.Last, turn, calls)
		}
	}
	if err := t.store(ctx, rec, h.Last, turn, calls); err != nil {
		return models.HistoryMessage{}, err
	}
	return models.HistoryMessage{}, fmt.Errorf("no answer without a tool call after %d model calls (the turn so far is stored)", rounds)
}

// store appends the turn, guarded by last, then records its model calls
// (a dump is a stored session's, so the append comes first).
func (t Turn) store(ctx context.Context, rec Recorder, last string, turn []models.HistoryMessage, calls []*CallRecord) error {
	_, err := t.Store.Append(ctx, t.Session, turn, AppendOptions{IfLast: last})
	for _, c := range calls {
		record(ctx, rec, t.Session, c)
	}
	return err
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

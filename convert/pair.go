package convert

import (
	"strconv"

	"github.com/remstore/remstore/models"
)

// Result is a tool message answering one call of a Turn.
type Result struct {
	CallID string // the call it answers (tool_call_id, else call_{i})
	Name   string // SanitizeToolName of tool_name
	// Content is the tool message's text, as stored.
	Content string
	// Message is the stored tool message itself (its timestamp, its id).
	Message *models.HistoryMessage
}

// Turn is an assistant message with the tool results right after it: the
// unit that every model API pairs calls and results by. Calls are the
// assistant's stored tool calls that a result answers, then one call
// synthesized per result that answers none of them (SPEC §5: the peer's
// rows keep no calls). A stored call with no result (removed by a pop, or
// never stored) is left out: every model API refuses a call without its
// result, and the peer, which knows calls only from results, shows none.
// Assistant is nil for tool results with no assistant message before them.
type Turn struct {
	Assistant *models.HistoryMessage
	Calls     []models.ToolCall
	Results   []Result
}

// Pair builds a Turn; first is the history position of tools[0], which
// names a result without a call id (call_{i}). This is the one place that
// pairs calls with results: the pydantic-ai conversion and every model SDK
// adapter (package sdk/...) build their calls from it.
func Pair(asst *models.HistoryMessage, tools []models.HistoryMessage, first int) Turn {
	return pair(asst, tools, first, false)
}

// pair is Pair; stored keeps every stored call, answered or not (WalkAll).
func pair(asst *models.HistoryMessage, tools []models.HistoryMessage, first int, stored bool) Turn {
	t := Turn{Assistant: asst}
	ids := make([]string, len(tools))
	answered := map[string]bool{}
	for k := range tools {
		ids[k] = tools[k].ToolCallID
		if ids[k] == "" {
			ids[k] = "call_" + strconv.Itoa(first+k)
		}
		answered[ids[k]] = true
	}
	known := map[string]bool{}
	if asst != nil {
		for _, c := range asst.ToolCalls {
			if (stored || answered[c.ID]) && !known[c.ID] {
				t.Calls = append(t.Calls, models.ToolCall{ID: c.ID, Name: SanitizeToolName(c.Name), Arguments: c.Arguments})
				known[c.ID] = true
			}
		}
	}
	for k := range tools {
		m, id := &tools[k], ids[k]
		name := SanitizeToolName(m.ToolName)
		if !known[id] {
			known[id] = true
			t.Calls = append(t.Calls, models.ToolCall{ID: id, Name: name, Arguments: string(callArgs(m))})
		}
		t.Results = append(t.Results, Result{CallID: id, Name: name, Content: m.Content, Message: m})
	}
	return t
}

// ArgsObject is a call's arguments as pydantic-ai and every model API take
// them: a JSON object; anything else (SPEC §5) is {}.
func ArgsObject(c models.ToolCall) []byte {
	if obj, ok := c.ArgumentsObject(); ok {
		return obj
	}
	return []byte("{}")
}

// Walk groups a history the way Stream does, handing fn each user
// message alone (turn nil) and each assistant message together with the
// tool messages right after it as a Turn; a tool message with no assistant
// before it is a Turn of its own. Stored system messages are skipped, as
// in the pydantic-ai history (SPEC §5): the system prompt is the caller's.
// Roles outside SPEC §1 are handed alone too: the caller decides (an SDK
// adapter refuses them). i is the history position of the message or of
// the turn's first message.
func Walk(history []models.HistoryMessage, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	return walk(history, false, fn)
}

// WalkAll is Walk for a history that gives back what was stored
// (langchaingo's chat history): stored system messages are handed to fn
// too, and a turn's Calls keep every stored call, answered or not.
func WalkAll(history []models.HistoryMessage, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	return walk(history, true, fn)
}

func walk(history []models.HistoryMessage, all bool, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	for i := 0; i < len(history); {
		m := &history[i]
		role := m.Role.Normalize()
		switch {
		case role == models.RoleSystem && !all:
			i++
			continue
		case role == models.RoleTool: // no assistant before it
			t := pair(nil, history[i:i+1], i, all)
			if err := fn(i, m, &t); err != nil {
				return err
			}
			i++
			continue
		case role != models.RoleAssistant:
			if err := fn(i, m, nil); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		for j < len(history) && history[j].Role.IsTool() {
			j++
		}
		t := pair(m, history[i+1:j], i+1, all)
		if err := fn(i, m, &t); err != nil {
			return err
		}
		i = j
	}
	return nil
}

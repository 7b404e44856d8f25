package convert

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// Result is a tool message answering one call of a Turn.
type Result struct {
	CallID string // the call it answers (tool_call_id, else call_{i})
	Name   string // SanitizeToolName of tool_name
	// Content is the tool message's text, as stored.
	Content string
	// Message is the stored tool message itself (its timestamp, its id).
	Message *models.HistoryMessage
	// Index is the tool message's position in the history.
	Index int
}

// Turn is an assistant message with the tool results right after it: the
// unit that every model API pairs calls and results by. Calls are the
// assistant's stored tool calls that a result answers, then one call
// synthesized per result that answers none of them (the contract with the Python service: the Python service's
// rows keep no calls); each call's arguments are CallArguments'. A stored
// call with no result (removed by a pop, or never stored) is left out:
// every model API refuses a call without its result, and the Python service, which
// knows calls only from results, shows none. Assistant is nil for tool
// results with no assistant message before them.
//
// The messages Walk hands out carry the row's fields only, none of its
// extra keys: what an adapter sends beyond them (reasoning) it takes from
// View, the assistant message's view (visible.Of), and from nothing else.
type Turn struct {
	Assistant *models.HistoryMessage
	Calls     []models.ToolCall
	Results   []Result
	View      visible.View // of Assistant; zero when it is nil
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
	answered := map[string]*models.HistoryMessage{} // a call id -> the first result answering it
	for k := range tools {
		ids[k] = tools[k].ToolCallID
		if ids[k] == "" {
			ids[k] = "call_" + strconv.Itoa(first+k)
		}
		if answered[ids[k]] == nil {
			answered[ids[k]] = &tools[k]
		}
	}
	known := map[string]bool{}
	if asst != nil {
		for i := range asst.ToolCalls {
			c := &asst.ToolCalls[i]
			r := answered[c.ID]
			if (stored || r != nil) && !known[c.ID] {
				t.Calls = append(t.Calls, models.ToolCall{ID: c.ID, Name: SanitizeToolName(c.Name), Arguments: CallArguments(c, r)})
				known[c.ID] = true
			}
		}
	}
	for k := range tools {
		m, id := &tools[k], ids[k]
		name := SanitizeToolName(m.ToolName)
		if !known[id] {
			known[id] = true
			t.Calls = append(t.Calls, models.ToolCall{ID: id, Name: name, Arguments: CallArguments(nil, m)})
		}
		t.Results = append(t.Results, Result{CallID: id, Name: name, Content: m.Content, Message: m, Index: first + k})
	}
	return t
}

// CallArguments decides the arguments a tool call is sent with: the one
// rule for the pydantic-ai history, every model SDK adapter and the viewer.
// result is the tool message answering the call (nil for a stored call no
// message answers); stored is the call as the assistant message stored it
// (nil for a result that answers no stored call). In order:
//
//   - the result's tool_arguments when present (not absent, not null), even
//     where a stored call says otherwise: the Python service sends them
//     from the same rows, and a load shows them;
//   - else the stored call's own arguments, as stored (the Python service,
//     whose rows keep no calls, would take the result's content here: the
//     call's output, not its input; docs/interop.md);
//   - else the result's content parsed as JSON.
//
// A value taken from the result is made an object as the contract with the Python service says (a JSON
// string holding an object is that object, anything else {}); a sender
// takes ArgsObject of every call, so a stored call's arguments go the same
// way. Where tool_arguments hold the value the stored call holds, the
// stored call's text is kept: an adapter that sends the text as it is
// (Chat Completions, Responses) sends what the model wrote.
func CallArguments(stored *models.ToolCall, result *models.HistoryMessage) string {
	switch {
	case result != nil && result.ToolArguments != nil && string(bytes.TrimSpace(result.ToolArguments)) != "null":
		args := argsObject(result.ToolArguments)
		if stored != nil && models.SameJSON(string(args), string(ArgsObject(*stored))) {
			return stored.Arguments // the same value: the call as the model wrote it, byte for byte
		}
		return string(args)
	case stored != nil:
		return stored.Arguments
	case result != nil:
		return string(argsObject([]byte(result.Content)))
	}
	return "{}"
}

// argsObject is raw as call arguments: a JSON object; a JSON string holding
// one is that object; anything else (a list, a number, not JSON) is {}.
func argsObject(raw []byte) json.RawMessage {
	return ArgsObject(models.ToolCall{Arguments: string(raw)})
}

// ArgsObject is a call's arguments as pydantic-ai and every model API take
// them: a JSON object; anything else is {}.
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
// in the pydantic-ai history: the system prompt is the caller's.
// Roles outside the Python service's roles are handed alone too: the caller decides (an SDK
// adapter refuses them). i is the history position of the message or of
// the turn's first message.
func Walk(history []models.HistoryMessage, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	return walk(history, 0, false, fn)
}

// WalkAll is Walk for a history that gives back what was stored
// (langchaingo's chat history): stored system messages are handed to fn
// too, and a turn's Calls keep every stored call, answered or not.
func WalkAll(history []models.HistoryMessage, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	return walk(history, 0, true, fn)
}

// walk is Walk and WalkAll; base is the history position of stored[0].
func walk(stored []models.HistoryMessage, base int, all bool, fn func(i int, m *models.HistoryMessage, turn *Turn) error) error {
	history := make([]models.HistoryMessage, len(stored))
	for i := range stored {
		history[i] = bare(stored[i])
	}
	for i := 0; i < len(history); {
		m := &history[i]
		role := m.Role.Normalize()
		switch {
		case role == models.RoleSystem && !all:
			i++
			continue
		case role == models.RoleTool: // no assistant before it
			t := pair(nil, history[i:i+1], base+i, all)
			if err := fn(base+i, m, &t); err != nil {
				return err
			}
			i++
			continue
		case role != models.RoleAssistant:
			if err := fn(base+i, m, nil); err != nil {
				return err
			}
			i++
			continue
		}
		j := i + 1
		for j < len(history) && history[j].Role.IsTool() {
			j++
		}
		t := pair(m, history[i+1:j], base+i+1, all)
		t.View = visible.Of(stored[i])
		if err := fn(base+i, m, &t); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// Walker is Walk for a history handed over message by message (a streamed
// load, which never holds the whole history): an assistant message is held
// until the tool messages after it end, then handed to fn with them as
// Walk hands it; Close hands over what is still held. Positions count from
// the first message added. The pointers fn gets are valid during the call.
type Walker struct {
	fn   func(i int, m *models.HistoryMessage, turn *Turn) error
	held []models.HistoryMessage // an assistant message and the tool messages after it
	at   int                     // the position of held[0]
	next int                     // the position of the next message
}

// NewWalker returns a Walker handing fn what Walk would.
func NewWalker(fn func(i int, m *models.HistoryMessage, turn *Turn) error) *Walker {
	return &Walker{fn: fn}
}

// Add walks the next message of the history.
func (w *Walker) Add(m models.HistoryMessage) error {
	pos := w.next
	w.next++
	if len(w.held) > 0 && m.Role.IsTool() {
		w.held = append(w.held, m)
		return nil
	}
	if err := w.Close(); err != nil {
		return err
	}
	w.held, w.at = append(w.held, m), pos
	if m.Role.Normalize() == models.RoleAssistant {
		return nil
	}
	return w.Close()
}

// Close hands over the turn still held.
func (w *Walker) Close() error {
	if len(w.held) == 0 {
		return nil
	}
	err := walk(w.held, w.at, false, w.fn)
	clear(w.held)
	w.held = w.held[:0]
	return err
}

// bare is m with the row's fields only: an adapter sends nothing of its
// extra keys but what the view holds.
func bare(m models.HistoryMessage) models.HistoryMessage {
	m.Extra = nil
	return m
}

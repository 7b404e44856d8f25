// Package visible decides, for one stored row, what a model may be sent
// for it: its text, tool calls, tool result, media, reasoning, and whatever
// else a kept source or item hands a model SDK. Of is the one answer. Every
// adapter (the pydantic-ai conversion, the Agents SDK item a load hands
// back, the Go SDK adapters) sends what the view holds and nothing else,
// the store refuses a row whose view withholds something, and the viewer
// draws the view.
package visible

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/remstore/remstore/models"
)

// The message keys (and metadata keys) whose content reaches a model
// besides the row's own fields.
const (
	// PydanticAIKey holds the pydantic-ai parts a row was decoded from.
	PydanticAIKey = "pydantic_ai"
	// AgentsKey holds the OpenAI Agents SDK item a row was made from.
	AgentsKey = "openai_agents"
	// ReasoningKey holds what a provider returned beside an answer that
	// its next request carries back: a list of {"provider", "item"}.
	ReasoningKey = "reasoning"
)

// The providers whose reasoning items an adapter sends back. Items of any
// other provider are kept inert: they are in no view and no adapter sends
// them.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
	Google    = "google"
)

// View is what a model may be sent for one stored row. An adapter sends a
// part of it, never more; what the row holds beyond it is Withheld.
type View struct {
	Role models.Role
	// Text is the row's content, as every adapter sends it (cut, when the
	// load cut it).
	Text string
	// Calls are an assistant row's tool calls.
	Calls []models.ToolCall
	// Result is a tool row's call: its id, tool name and arguments (the
	// result's text is Text). nil on other rows.
	Result *Result
	// Media are images, documents, audio, video and files a source or item
	// sends beside the text, by link, file id or bytes.
	Media []Media
	// Reasoning is what a provider issued beside an answer and gets back.
	Reasoning []Reasoning
	// Other is what else a kept source or item hands its SDK (a hosted
	// tool's call and output, instructions, a built-in tool's return),
	// whole, as the SDK gets it.
	Other []Other
	// Withheld names what the row holds that no view may show: the store
	// refuses such a row; a load sends the row without it (Withholds).
	Withheld []Withheld
}

// Result is the call a tool row answers.
type Result struct {
	CallID    string
	Name      string
	Arguments string // the tool_arguments JSON, "" when none
}

// Media is one image, document, audio, video or file a model is sent.
type Media struct {
	From      string // the field it comes from: pydantic_ai.parts[0].content[1]
	Kind      string // image, document, audio, video or file
	URL       string // a link the provider fetches
	FileID    string // a file the provider holds
	MediaType string
	Data      string // bytes, base64 as stored
	Name      string // an identifier or file name
}

// Reasoning is one reasoning item a provider issued.
type Reasoning struct {
	From     string // the field: reasoning[0].item, pydantic_ai.parts[1], openai_agents
	Source   string // the key it lives under: ReasoningKey, PydanticAIKey or AgentsKey
	Provider string
	// Kind: thinking or redacted_thinking (Anthropic), reasoning (OpenAI),
	// thought, signature or unsigned (Google: a call Gemini made without a
	// signature), thinking (a pydantic-ai part).
	Kind string
	Text string // thinking text the model is sent back (Anthropic's is signed)
	Seal string // the provider's signature, encrypted content or redacted data
	ID   string // an OpenAI reasoning item's id
	// On and Call place a Google thought signature: on the answer's text,
	// or on its call number Call.
	On   string
	Call int
}

// Other is a kept part or item the view holds whole.
type Other struct {
	From string
	Kind string
	JSON json.RawMessage
}

// Withheld is one field no view may show, and why.
type Withheld struct {
	Field  string
	Reason string
}

// Err is the first withheld field as a *models.FieldError of message i,
// nil when nothing is withheld: the store's refusal.
func (v View) Err(i int) error {
	if len(v.Withheld) == 0 {
		return nil
	}
	w := v.Withheld[0]
	return &models.FieldError{Index: i, Field: w.Field, Reason: w.Reason}
}

// Withholds says something under key (PydanticAIKey, AgentsKey,
// ReasoningKey) is withheld: a load does not hand that key's value to its
// SDK, and the row goes by its own fields.
func (v View) Withholds(key string) bool {
	for _, w := range v.Withheld {
		if Under(w.Field, key) {
			return true
		}
	}
	return false
}

// ReasoningFor is the reasoning an adapter for provider sends back: the
// row's reasoning items of that provider, in order.
func (v View) ReasoningFor(provider string) []Reasoning {
	var out []Reasoning
	for _, r := range v.Reasoning {
		if r.Source == ReasoningKey && r.Provider == provider {
			out = append(out, r)
		}
	}
	return out
}

// Of is the view of m. It reads the row's fields and its pydantic_ai,
// openai_agents and reasoning keys; any other key reaches no model.
func Of(m models.HistoryMessage) View {
	var src *Source
	var bad *Withheld
	if raw, ok := m.ExtraRaw(PydanticAIKey); ok {
		var s Source
		if err := json.Unmarshal(raw, &s); err != nil || (s.Message == nil && len(s.Parts) == 0) {
			bad = &Withheld{PydanticAIKey, "not a pydantic-ai source remstore writes: an object with \"message\" or \"parts\""}
		} else {
			src = &s
		}
	}
	v := OfSource(m, src)
	if bad != nil {
		v.Withheld = append([]Withheld{*bad}, v.Withheld...)
	}
	return v
}

// OfSource is Of with the row's pydantic_ai source already decoded (nil:
// none, whatever m's extras say): the pydantic-ai conversion decodes it
// once for both.
func OfSource(m models.HistoryMessage, src *Source) View {
	v := View{Role: m.Role, Text: m.Content}
	switch {
	case m.Role.IsTool():
		v.Result = &Result{CallID: m.ToolCallID, Name: m.ToolName}
		if len(m.ToolArguments) > 0 && string(m.ToolArguments) != "null" {
			v.Result.Arguments = string(compact(m.ToolArguments))
		}
	case len(m.ToolCalls) > 0:
		v.Calls = append([]models.ToolCall(nil), m.ToolCalls...)
	}
	if raw, ok := m.ExtraRaw(ReasoningKey); ok {
		v.reasoningItems(m.Role, raw)
	}
	if src != nil {
		v.pydantic(m, src)
	}
	if raw, ok := m.ExtraRaw(AgentsKey); ok {
		v.agents(m, raw)
	}
	// A source or item that withholds anything is not sent at all (the
	// row goes by its own fields): nothing of it is in the view.
	for _, key := range []string{PydanticAIKey, AgentsKey} {
		if v.Withholds(key) {
			v.drop(key)
		}
	}
	return v
}

// drop takes out of the view what came from key.
func (v *View) drop(key string) {
	from := func(f string) bool { return Under(f, key) }
	v.Media = slices.DeleteFunc(v.Media, func(x Media) bool { return from(x.From) })
	v.Reasoning = slices.DeleteFunc(v.Reasoning, func(x Reasoning) bool { return from(x.From) })
	v.Other = slices.DeleteFunc(v.Other, func(x Other) bool { return from(x.From) })
}

// Under says field is key or a field inside it.
func Under(field, key string) bool {
	return field == key || len(field) > len(key) && field[:len(key)] == key && (field[len(key)] == '.' || field[len(key)] == '[')
}

func (v *View) withhold(field, format string, a ...any) {
	v.Withheld = append(v.Withheld, Withheld{Field: field, Reason: fmt.Sprintf(format, a...)})
}

// compact is raw without insignificant space (raw itself when it is not
// JSON).
func compact(raw []byte) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// object reads raw as a JSON object of raw values; nil when it is not one.
func object(raw json.RawMessage) map[string]json.RawMessage {
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// str is o[k] as a string; ok is false when it is missing, null or
// another type.
func str(o map[string]json.RawMessage, k string) (string, bool) {
	v, has := o[k]
	if !has || isNull(v) {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) == 0 || string(t) == "null"
}

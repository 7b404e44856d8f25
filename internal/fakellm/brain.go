// Package fakellm is a scripted model behind local fake provider servers
// (OpenAI Chat Completions and Responses, Anthropic Messages, Gemini
// generateContent) that record every request body, for the SDK adapters' tests.
package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
)

// Msg is one message of a request, whatever the provider: text, the calls
// an assistant message makes, the results a tool message carries.
type Msg struct {
	Role    string // user, assistant, system
	Text    string
	Calls   []Call
	Results []Result
}

// Call is a tool call; Args its JSON text.
type Call struct{ ID, Name, Args string }

// Result is a tool result; Name may be empty (OpenAI Chat sends the id only).
type Result struct{ ID, Name, Content string }

// Reply is what the model answers.
type Reply struct {
	Text     string
	Calls    []Call
	Thinking string // a reasoning block, where the provider has one
}

// Marker is hidden in the middle of LongAnswer: a cut answer loses it, and
// only a REM LOOKUP brings it back.
const Marker = "DAY2-TRAM28"

// LongAnswer is the long final answer of the first turn (1,200+ characters).
var LongAnswer = "Here is your Lisbon plan. " + strings.Repeat("Day 1: Alfama, castle, fado at night. ", 12) +
	"Day 2: ride tram 28 (" + Marker + ") to Estrela. " + strings.Repeat("Day 3: Belém, pastéis, the river. ", 12) + "Enjoy!"

// LongGuide is what the fetch_guide tool returns: a long tool result, which
// remstore never cuts.
var LongGuide = strings.Repeat("Lisbon guide: miradouros, trams, tiles. ", 60)

// Prompts are the user's three turns of the scripted conversation.
var Prompts = []string{
	"Plan three days in Lisbon; check the weather and the guide.",
	"What did you plan for day 2? Use rem_lookup if your answer was cut.",
	"Thanks!",
}

var hintRE = regexp.MustCompile(`REM LOOKUP (session-[0-9a-f-]+-msg-[0-9]+)`)

// Decide is the scripted model: it reads the conversation so far and says
// what to answer. The same conversation always gets the same reply.
func Decide(msgs []Msg) Reply {
	if len(msgs) == 0 {
		return Reply{Text: "Hello."}
	}
	names := map[string]string{}
	calls := 0
	for _, m := range msgs {
		for _, c := range m.Calls {
			names[c.ID] = c.Name
			calls++
		}
	}
	id := func(k int) string { return fmt.Sprintf("call_%d", calls+k) }
	last := msgs[len(msgs)-1]
	if len(last.Results) > 0 {
		for _, r := range last.Results {
			name := r.Name
			if name == "" {
				name = names[r.ID]
			}
			if name == "rem_lookup" {
				if strings.Contains(r.Content, Marker) {
					return Reply{Text: "Day 2 is tram 28: " + Marker + "."}
				}
				return Reply{Text: "I could not recover it: " + r.Content}
			}
		}
		return Reply{Text: LongAnswer}
	}
	switch {
	case strings.Contains(last.Text, "Lisbon"):
		return Reply{Thinking: "The user wants weather and a guide; call both tools.", Calls: []Call{
			{ID: id(0), Name: "get_weather", Args: `{"city": "Lisbon"}`},
			{ID: id(1), Name: "fetch_guide", Args: `{"city": "Lisbon", "days": 3}`}}}
	case strings.Contains(last.Text, "day 2"):
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role != "assistant" {
				continue
			}
			if strings.Contains(msgs[i].Text, Marker) {
				return Reply{Text: "Day 2 is tram 28: " + Marker + "."}
			}
			if k := hintRE.FindStringSubmatch(msgs[i].Text); k != nil {
				return Reply{Thinking: "My answer was cut; look it up.", Calls: []Call{{ID: id(0), Name: "rem_lookup", Args: `{"key":"` + k[1] + `"}`}}}
			}
		}
		return Reply{Text: "I have no plan to recall."}
	}
	return Reply{Text: "You are welcome."}
}

// RunTool is the scripted tools: what each returns for its arguments.
func RunTool(name, args string) string {
	switch name {
	case "get_weather":
		return `{"city":"Lisbon","celsius":21,"sky":"clear"}`
	case "fetch_guide":
		return LongGuide
	}
	return `{"error":"no tool ` + name + `"}`
}

// Recorder keeps every request body a fake server received, in order.
type Recorder struct {
	mu      sync.Mutex
	bodies  [][]byte
	streams int
}

func (r *Recorder) add(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, b)
}

// Bodies returns the recorded bodies and forgets them.
func (r *Recorder) Bodies() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.bodies
	r.bodies = nil
	return b
}

// tokens is a deterministic token count for usage: a word count.
func tokens(s string) int64 { return int64(len(strings.Fields(s))) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, status int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": fmt.Sprintf(format, a...), "type": "invalid_request_error"}})
}

// text reads content that is a string or a list of {type: text, text} parts.
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type, Text string
	}
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

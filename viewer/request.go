package viewer

import (
	"fmt"
	"strings"
)

// requestFacts reads, from the request body a model API received (as an
// audit dump records it), the system prompt it carried and how many
// messages it sent, in that API's own words: Chat Completions' and
// Anthropic's messages, the Responses API's input items, genai's contents,
// pydantic-ai's messages. A call a Go SDK made through sdk.Transport
// records its request and no pydantic-ai count: the call page showed "0
// pydantic-ai messages sent" and "system prompt: not in the audit dump"
// beside a request whose first message was the system prompt.
func requestFacts(req any) (system, sent string) {
	switch r := req.(type) {
	case []any: // pydantic-ai's messages
		for _, m := range r {
			mm, _ := m.(map[string]any)
			if mm["kind"] != "request" {
				continue
			}
			parts, _ := mm["parts"].([]any)
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				if pm["part_kind"] == "system-prompt" && system == "" {
					system, _ = pm["content"].(string)
				}
			}
		}
		return system, counted(len(r), "pydantic-ai message")
	case map[string]any:
		if s := textOf(r["system"]); s != "" { // Anthropic
			system = s
		}
		if s, ok := r["instructions"].(string); ok && s != "" { // Responses
			system = s
		}
		for _, k := range []string{"systemInstruction", "system_instruction"} { // genai
			if si, ok := r[k].(map[string]any); ok && system == "" {
				system = textOf(si["parts"])
			}
		}
		for _, f := range []struct{ key, noun string }{{"messages", "message"}, {"input", "input item"}, {"contents", "content"}} {
			items, ok := r[f.key].([]any)
			if !ok {
				continue
			}
			if len(items) > 0 && system == "" { // Chat Completions, Responses: a system or developer message first
				if first, ok := items[0].(map[string]any); ok && (first["role"] == "system" || first["role"] == "developer") {
					system = textOf(first["content"])
				}
			}
			return system, counted(len(items), f.noun)
		}
	}
	return system, ""
}

// textOf is the text of a message content as the model APIs write it: a
// string, or a list of parts each with a "text".
func textOf(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var texts []string
		for _, p := range c {
			switch pm := p.(type) {
			case string:
				texts = append(texts, pm)
			case map[string]any:
				if t, ok := pm["text"].(string); ok {
					texts = append(texts, t)
				}
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}

func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

package convert

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/remstore/remstore/models"
)

// Failure kinds: what went wrong in an agent's step, as a person debugging
// a session looks for it (issue 41). One rule, read by the viewer's marks
// and filter.
const (
	FailureToolError = "tool error" // a tool result that says it failed
	FailureRetry     = "retry"      // pydantic-ai's retry prompt: the model's call or output was refused
	FailureRefusal   = "refusal"    // the model refused (a content filter, a refusal item)
)

// Failure says whether m records a failed step, and which: a tool result
// whose JSON object has "status": "error", "is_error": true or a non-empty
// "error"; a row pydantic-ai's retry-prompt made; an answer the model
// ended with a content filter, or an Agents SDK item holding a refusal.
// "" for any other message.
func Failure(m models.HistoryMessage) string {
	if m.Role.IsTool() && toolFailed(m.Content) {
		return FailureToolError
	}
	if src, ok := sourceOf(&m); ok {
		for _, p := range src.Parts {
			if k := rawString(p["part_kind"]); k == "retry-prompt" || k == "retry-feedback" {
				return FailureRetry
			}
		}
		if rawString(src.Message["finish_reason"]) == "content_filter" {
			return FailureRefusal
		}
	}
	if v, ok := m.ExtraRaw("openai_agents"); ok && bytes.Contains(v, []byte(`"type":"refusal"`)) {
		return FailureRefusal
	}
	return ""
}

// toolFailed reads a tool result's text as a JSON object saying it failed.
func toolFailed(content string) bool {
	c := strings.TrimSpace(content)
	if !strings.HasPrefix(c, "{") || !strings.Contains(strings.ToLower(c), "error") {
		return false
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(c), &obj) != nil {
		return false
	}
	if strings.EqualFold(rawString(obj["status"]), "error") || string(obj["is_error"]) == "true" {
		return true
	}
	e, ok := obj["error"]
	return ok && string(e) != "null" && string(e) != `""` && string(e) != "false" && string(e) != "{}"
}

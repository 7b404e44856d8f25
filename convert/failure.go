package convert

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/remstore/remstore/models"
)

// Failure kinds: what went wrong in an agent's step, as a person debugging
// a session looks for it. One rule, read by the viewer's marks
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
	if mayFail(m) {
		src, _ := sourceOf(&m)
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

// mayFail says whether m's source can name a retry or a content filter: a
// page of a session asks this of every message, and decoding every source
// to find none was most of that. A source with an escape is decoded anyway.
func mayFail(m models.HistoryMessage) bool {
	v, ok := m.ExtraRaw(SourceKey)
	return ok && (bytes.Contains(v, []byte("retry-")) || bytes.Contains(v, []byte("content_filter")) || bytes.IndexByte(v, '\\') >= 0)
}

// toolFailed reads a tool result's text as a JSON object saying it failed.
// Only a text that names status or error (or escapes a key) is decoded.
func toolFailed(content string) bool {
	c := strings.TrimSpace(content)
	if !strings.HasPrefix(c, "{") || !strings.Contains(c, "status") && !strings.Contains(c, "error") && !strings.Contains(c, "\\") {
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

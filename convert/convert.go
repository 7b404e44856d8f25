package convert

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/remstore/remstore/models"
)

// Options controls a conversion.
type Options struct {
	// SystemPrompt, when not empty, becomes the first request. pydantic-ai
	// adds its own system prompt only to an empty history, so multi-turn
	// callers must pass it here.
	SystemPrompt string
	// Now is the time used for messages without a (parseable) timestamp;
	// nil means time.Now. Set it for reproducible output.
	Now func() time.Time
}

// ModelName is what synthesized responses say produced them.
const ModelName = "recovered"

// Message is a pydantic-ai ModelRequest or ModelResponse.
type Message struct {
	Parts     []Part `json:"parts"`
	Usage     *Usage `json:"usage,omitempty"`
	ModelName string `json:"model_name,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	Kind      string `json:"kind"` // "request" or "response"
}

// Part is one message part; PartKind selects which fields apply.
type Part struct {
	ToolName   string          `json:"tool_name,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Timestamp  string          `json:"timestamp,omitempty"`
	// PartKind is system-prompt, user-prompt, text, tool-call or tool-return.
	PartKind string `json:"part_kind"`
}

// Usage is pydantic-ai's RequestUsage with the fields 1.42 and 2.x share, all
// zero: the history carries no token counts, and null is rejected.
type Usage struct {
	InputTokens          int            `json:"input_tokens"`
	CacheWriteTokens     int            `json:"cache_write_tokens"`
	CacheReadTokens      int            `json:"cache_read_tokens"`
	OutputTokens         int            `json:"output_tokens"`
	InputAudioTokens     int            `json:"input_audio_tokens"`
	CacheAudioReadTokens int            `json:"cache_audio_read_tokens"`
	OutputAudioTokens    int            `json:"output_audio_tokens"`
	Details              map[string]int `json:"details"`
}

// Convert builds the pydantic-ai messages for a history.
func Convert(history []models.HistoryMessage, o Options) []Message {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	var fallback string // conversion time, computed at most once
	stamp := func(m *models.HistoryMessage) string {
		if m != nil && m.Timestamp != nil {
			if z, ok := utcZ(*m.Timestamp); ok {
				return z
			}
			if t, err := models.ParseTimestamp(*m.Timestamp); err == nil {
				return FormatTimestamp(t)
			}
		}
		if fallback == "" {
			fallback = FormatTimestamp(now())
		}
		return fallback
	}
	var out []Message
	if o.SystemPrompt != "" {
		var first *models.HistoryMessage
		if len(history) > 0 {
			first = &history[0]
		}
		out = append(out, Message{Kind: "request", Parts: []Part{{
			Content: jsonString(o.SystemPrompt), Timestamp: stamp(first), PartKind: "system-prompt"}}})
	}
	for i := 0; i < len(history); i++ {
		m := &history[i]
		switch m.Role.Normalize() {
		case models.RoleUser:
			out = append(out, Message{Kind: "request", Parts: []Part{{
				Content: jsonString(m.Content), Timestamp: stamp(m), PartKind: "user-prompt"}}})
		case models.RoleAssistant:
			j := i + 1
			for j < len(history) && history[j].Role.IsTool() {
				j++
			}
			out = appendTurn(out, m, history[i+1:j], i+1, stamp)
			i = j - 1
		case models.RoleTool: // no assistant before it
			out = appendTurn(out, nil, history[i:i+1], i, stamp)
		}
		// system messages and unknown roles are skipped
	}
	if out == nil {
		out = []Message{}
	}
	return out
}

// appendTurn adds the response of an assistant message (nil for an orphan
// tool) with one tool call per tool message, then the request with their
// returns. first is the input position of tools[0].
func appendTurn(out []Message, asst *models.HistoryMessage, tools []models.HistoryMessage, first int, stamp func(*models.HistoryMessage) string) []Message {
	var calls, returns []Part
	for k := range tools {
		t := &tools[k]
		id := t.ToolCallID
		if id == "" {
			id = "call_" + strconv.Itoa(first+k)
		}
		name := SanitizeToolName(t.ToolName)
		calls = append(calls, Part{ToolName: name, Args: callArgs(t), ToolCallID: id, PartKind: "tool-call"})
		returns = append(returns, Part{ToolName: name, Content: returnContent(t.Content), ToolCallID: id,
			Timestamp: stamp(t), PartKind: "tool-return"})
	}
	parts := calls
	if asst != nil && asst.Content != "" {
		parts = append(parts, Part{Content: jsonString(asst.Content), PartKind: "text"})
	}
	if len(parts) > 0 {
		src := asst
		if src == nil {
			src = &tools[0]
		}
		out = append(out, Message{Kind: "response", Parts: parts, Usage: &Usage{Details: map[string]int{}},
			ModelName: ModelName, Timestamp: stamp(src)})
	}
	if len(returns) > 0 {
		out = append(out, Message{Kind: "request", Parts: returns})
	}
	return out
}

// SanitizeToolName replaces every character outside [a-zA-Z0-9_-] with "_";
// an empty name becomes "unknown_tool".
func SanitizeToolName(name string) string {
	if name == "" {
		return "unknown_tool"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// returnContent is the tool content parsed as JSON, {"raw": content} when it
// is not JSON, {} when empty.
func returnContent(content string) json.RawMessage {
	if content == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(content)) {
		return compact([]byte(content))
	}
	var b bytes.Buffer
	b.WriteString(`{"raw":`)
	b.Write(jsonString(content))
	b.WriteByte('}')
	return b.Bytes()
}

// callArgs is tool_arguments, else the content parsed as JSON, always as an
// object: a JSON string holding an object is parsed; anything else is {}.
func callArgs(t *models.HistoryMessage) json.RawMessage {
	raw := []byte(t.ToolArguments)
	if raw == nil || string(raw) == "null" {
		raw = []byte(t.Content)
	}
	for range 2 {
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || !json.Valid(raw) {
			return json.RawMessage("{}")
		}
		switch raw[0] {
		case '{':
			return compact(raw)
		case '"':
			var s string
			_ = json.Unmarshal(raw, &s) // valid JSON string
			raw = []byte(s)
			continue
		}
		return json.RawMessage("{}")
	}
	return json.RawMessage("{}")
}

// utcZ rewrites the form loads produce, Python's isoformat of a UTC time
// ("2024-01-15T10:30:00[.ffffff]+00:00"), to pydantic's ("...Z") without
// parsing it; ok is false for any other form.
func utcZ(s string) (string, bool) {
	const frac = len("2006-01-02T15:04:05.000000+00:00")
	if (len(s) != frac && len(s) != frac-7) || s[len(s)-6:] != "+00:00" || s[10] != 'T' {
		return "", false
	}
	for i, c := range []byte(s[:len(s)-6]) {
		switch i {
		case 4, 7:
			if c != '-' {
				return "", false
			}
		case 10:
		case 13, 16:
			if c != ':' {
				return "", false
			}
		case 19:
			if c != '.' {
				return "", false
			}
		default:
			if c < '0' || c > '9' {
				return "", false
			}
		}
	}
	if len(s) == frac && s[19:26] == ".000000" {
		return s[:19] + "Z", true
	}
	return s[:len(s)-6] + "Z", true
}

// FormatTimestamp prints t as pydantic does: UTC, "Z", microseconds only when
// not zero.
func FormatTimestamp(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// JSON converts and encodes in one step: a compact JSON array.
func JSON(history []models.HistoryMessage, o Options) ([]byte, error) {
	return Marshal(Convert(history, o)), nil
}

// Marshal encodes converted messages: the bytes encoding/json would write
// (HTML escaping off, with a final newline), written without reflection.
func Marshal(msgs []Message) []byte {
	return appendJSON(make([]byte, 0, 512*len(msgs)+64), msgs)
}

func jsonString(s string) json.RawMessage { return appendString(nil, s) }

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

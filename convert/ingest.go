package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// SourceKey is the message key (and metadata key) under which a message
// decoded from pydantic-ai keeps what its row does not hold: the message
// envelope (model name, usage, provider ids, finish reason, timestamps, run
// id) and every part except the text the row's content carries. Stream uses
// it to rebuild the messages pydantic-ai produced, part for part, when the
// row's view (package visible) holds every part.
const SourceKey = visible.PydanticAIKey

// The part kinds of pydantic-ai 1.42 and 2.x. Kinds that map to a row are
// handled by name in requestRows and responseRow; the others are kept whole
// in the source of the row they travel with. A kind in neither list is
// refused: storing it blind could not promise that it comes back.
var (
	requestKinds = map[string]bool{
		"system-prompt": true, "user-prompt": true, "tool-return": true, "retry-prompt": true,
		"speech": true, "tool-search-return": true, "capability-load-return": true, "retry-feedback": true,
		"tool-availability-delta": true, "capability-load-delta": true, "model-settings-delta": true,
		"instruction-delta": true, "instruction-baseline": true, "compaction": true,
	}
	responseKinds = map[string]bool{
		"text": true, "tool-call": true, "builtin-tool-call": true, "builtin-tool-return": true, "thinking": true,
		"file": true, "tool-search-call": true, "capability-load-call": true, "builtin-tool-search-call": true,
		"builtin-tool-search-return": true, "compaction": true, "speech": true,
	}
	// toolReturnKinds become tool rows: what the Python service shows as a tool result.
	toolReturnKinds = map[string]bool{"tool-return": true, "tool-search-return": true, "capability-load-return": true}
)

// MaxPydanticAIMessages bounds one call: a turn is a handful of messages,
// and each may become several rows, so the rows' own limit (100,000 per
// store) would be met only after decoding far more than any turn holds.
const MaxPydanticAIMessages = 10_000

// textJoin separates the text parts of one response in its row's content.
const textJoin = "\n\n"

// source is the value of SourceKey on one row (visible.Source: the view
// of a row reads it too).
type source = visible.Source

// Ingested is what DecodePydanticAI read: the history messages to store, in
// order, and where each came from, so that an error about a row can name the
// pydantic-ai message and part.
type Ingested struct {
	Messages []models.HistoryMessage
	origins  []origin
}

type origin struct {
	msg, part int
	kind      string
}

// Locate turns a *models.FieldError about row i of Messages (what a store
// returns) into one naming the pydantic-ai message, part and part kind;
// other errors are returned as they are.
func (in *Ingested) Locate(err error) error {
	fe, ok := models.AsFieldError(err)
	if !ok || fe.Index < 0 || fe.Index >= len(in.origins) {
		return err
	}
	o := in.origins[fe.Index]
	field := fmt.Sprintf("parts[%d]", o.part)
	if fe.Field != "" && fe.Field != SourceKey {
		field += "." + fe.Field
	}
	return &models.FieldError{Index: o.msg, Field: field, Reason: o.kind + " part: " + fe.Reason}
}

// DecodePydanticAI reads a JSON array of pydantic-ai messages (what
// ModelMessagesTypeAdapter.dump_json or result.new_messages_json() write),
// message by message, and maps each to history messages:
//
//   - a request: one row per system-prompt (role system), user-prompt (user),
//     tool return (tool, content the return's JSON), retry prompt (tool
//     when it names a tool, else user) and retry feedback (user) part;
//   - a response: one assistant row, its text parts joined by a blank line,
//     its tool calls also in tool_calls (OpenAI's shape) and its usage in
//     usage; tool rows of the same input get their call's arguments.
//
// Every other part kind of pydantic-ai 1.42 and 2.x is kept whole in the
// row's SourceKey, as are the message envelope and every part's fields, so
// that Convert rebuilds the input part for part. An unknown part kind, a
// tool return without a call id, wrong types and invalid UTF-8 are refused
// with a *models.FieldError naming the message, the part and its kind.
func DecodePydanticAI(r io.Reader) (*Ingested, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonErr(-1, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, &models.FieldError{Index: -1, Reason: "expected a JSON array of pydantic-ai messages"}
	}
	in := &Ingested{Messages: []models.HistoryMessage{}}
	calls := map[string]json.RawMessage{} // tool_call_id -> args, for the tool rows
	for i := 0; dec.More(); i++ {
		if i == MaxPydanticAIMessages {
			return nil, &models.FieldError{Index: -1, Field: "messages",
				Reason: fmt.Sprintf("more than %d pydantic-ai messages in one call: store a long history in batches", MaxPydanticAIMessages)}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonErr(i, err)
		}
		if err := in.add(i, raw, calls); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonErr(-1, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &models.FieldError{Index: -1, Reason: "trailing data after the JSON array"}
	}
	return in, nil
}

// jsonErr is bad input for a syntax error or a cut-off input; a failed read
// (a body over its limit, a dropped connection) is returned as it is, so
// that the caller can tell it apart.
func jsonErr(i int, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return &models.FieldError{Index: i, Reason: "malformed JSON: unexpected end of input"}
	case errors.As(err, &se):
		return &models.FieldError{Index: i, Reason: "malformed JSON: " + err.Error()}
	}
	return fmt.Errorf("read pydantic-ai messages: %w", err)
}

// add maps message i.
func (in *Ingested) add(i int, raw json.RawMessage, calls map[string]json.RawMessage) error {
	bad := func(field, format string, a ...any) error {
		return &models.FieldError{Index: i, Field: field, Reason: fmt.Sprintf(format, a...)}
	}
	if !utf8.Valid(raw) {
		return bad("", "invalid UTF-8")
	}
	if reason := models.CheckJSONValue(raw); reason != "" {
		return bad("", "%s", reason)
	}
	var env map[string]json.RawMessage
	if json.Unmarshal(raw, &env) != nil {
		return bad("", "expected a JSON object (a pydantic-ai ModelRequest or ModelResponse)")
	}
	var kind string
	if json.Unmarshal(env["kind"], &kind) != nil || (kind != "request" && kind != "response") {
		return bad("kind", `must be "request" or "response"`)
	}
	var parts []map[string]json.RawMessage
	if json.Unmarshal(env["parts"], &parts) != nil {
		return bad("parts", "must be a list of part objects")
	}
	delete(env, "parts")
	kinds := make([]string, len(parts))
	for j, p := range parts {
		if p == nil {
			return bad(fmt.Sprintf("parts[%d]", j), "must be an object")
		}
		known := requestKinds
		if kind == "response" {
			known = responseKinds
		}
		if json.Unmarshal(p["part_kind"], &kinds[j]) != nil {
			return bad(fmt.Sprintf("parts[%d].part_kind", j), "missing or not a string")
		}
		if !known[kinds[j]] {
			return bad(fmt.Sprintf("parts[%d]", j), "unknown %s part kind %q: remstore stores the kinds of pydantic-ai 1.42 and 2.x (%s)",
				kind, kinds[j], strings.Join(sortedKeys(known), ", "))
		}
	}
	start := len(in.Messages)
	var err error
	if kind == "response" {
		err = in.responseRow(i, env, parts, kinds, calls)
	} else {
		err = in.requestRows(i, env, parts, kinds, calls)
	}
	if err != nil {
		in.Messages, in.origins = in.Messages[:start], in.origins[:start]
	}
	return err
}

// stringField reads p[key] as a string; ok is false when it is missing,
// null or another type.
func stringField(p map[string]json.RawMessage, key string) (string, bool) {
	var s string
	if v, has := p[key]; !has || string(v) == "null" || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

func (in *Ingested) push(m models.HistoryMessage, o origin) {
	in.Messages = append(in.Messages, m)
	in.origins = append(in.origins, o)
}

// requestRows maps a request: each part with content becomes a row, and the
// parts kept whole ride with the row before them (or the first row).
func (in *Ingested) requestRows(i int, env map[string]json.RawMessage, parts []map[string]json.RawMessage, kinds []string, calls map[string]json.RawMessage) error {
	type row struct {
		m   models.HistoryMessage
		src source
		o   origin
	}
	var rows []*row
	var lead []map[string]json.RawMessage // kept-whole parts before the first row
	msgStamp, _ := stringField(env, "timestamp")
	for j, p := range parts {
		k := kinds[j]
		field := func(f string) string { return fmt.Sprintf("parts[%d].%s", j, f) }
		bad := func(f, format string, a ...any) error {
			return &models.FieldError{Index: i, Field: field(f), Reason: k + " part: " + fmt.Sprintf(format, a...)}
		}
		m, keep, mapped, err := requestPart(k, p, calls, bad)
		if err != nil {
			return err
		}
		if !mapped {
			if len(rows) == 0 {
				lead = append(lead, p)
			} else {
				rows[len(rows)-1].src.Parts = append(rows[len(rows)-1].src.Parts, p)
			}
			continue
		}
		if ts, ok := stringField(p, "timestamp"); ok {
			m.Timestamp = &ts
		} else if msgStamp != "" {
			m.Timestamp = &msgStamp
		}
		if m.Timestamp != nil {
			if _, err := models.ParseTimestamp(*m.Timestamp); err != nil {
				return bad("timestamp", "not an ISO-8601 time: %q", truncateRunes(*m.Timestamp, 40))
			}
		}
		r := &row{m: m, o: origin{msg: i, part: j, kind: k}}
		own := p
		if !keep {
			own = without(p, "content")
		}
		r.src.Parts = append(append(r.src.Parts, lead...), own)
		if !keep {
			r.src.FromRow = []int{len(r.src.Parts) - 1}
		}
		lead = nil
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		// Only kept-whole parts: a system row with no text carries them (the
		// peer and SPEC §5 leave stored system messages out of a history).
		m := models.HistoryMessage{Role: models.RoleSystem}
		if msgStamp != "" {
			m.Timestamp = &msgStamp
		}
		kind := "request"
		if len(kinds) > 0 {
			kind = kinds[0]
		}
		rows = append(rows, &row{m: m, src: source{Parts: lead}, o: origin{msg: i, kind: kind}})
	}
	rows[0].src.Message = env
	for _, r := range rows {
		if r.src.Parts == nil {
			r.src.Parts = []map[string]json.RawMessage{}
		}
		b, err := marshal(r.src)
		if err != nil {
			return &models.FieldError{Index: i, Reason: err.Error()}
		}
		r.m.Extra = append(r.m.Extra, models.Field{Key: SourceKey, Value: b})
		in.push(r.m, r.o)
	}
	return nil
}

// requestPart maps one part of a request to its row's message; keep says
// the content stays in the source (not a plain string); mapped false says
// the part has no row of its own and is kept whole, riding with a row.
func requestPart(k string, p, calls map[string]json.RawMessage, bad func(f, format string, a ...any) error) (m models.HistoryMessage, keep, mapped bool, err error) {
	switch {
	case k == "system-prompt" || k == "user-prompt":
		m.Role = models.RoleSystem
		if k == "user-prompt" {
			m.Role = models.RoleUser
		}
		s, ok := stringField(p, "content")
		if !ok {
			if k == "system-prompt" {
				return m, false, false, bad("content", "must be a string")
			}
			// Multimodal: the text items are the row's content, the list
			// stays in the source.
			var items []json.RawMessage
			if json.Unmarshal(p["content"], &items) != nil {
				return m, false, false, bad("content", "must be a string or a list")
			}
			var texts []string
			for _, it := range items {
				var t string
				if json.Unmarshal(it, &t) == nil {
					texts = append(texts, t)
				}
			}
			s, keep = strings.Join(texts, "\n"), true
		}
		m.Content = s
	case k == "retry-feedback":
		// pydantic-ai 2.x's feedback on an output it could not use: the
		// model reads it in the user's voice, and so do a plain load,
		// search and the Python service, from the row's text.
		m.Role = models.RoleUser
		if s, ok := stringField(p, "content"); ok {
			m.Content = s
		} else {
			m.Content, keep = string(compact(p["content"])), true
		}
	case toolReturnKinds[k] || k == "retry-prompt":
		id, ok := stringField(p, "tool_call_id")
		if !ok || id == "" {
			return m, false, false, bad("tool_call_id", "missing or empty: a tool result must name its call")
		}
		name, hasName := stringField(p, "tool_name")
		if _, present := p["tool_name"]; present && !hasName && string(p["tool_name"]) != "null" {
			return m, false, false, bad("tool_name", "must be a string or null")
		}
		content, has := p["content"]
		if !has {
			content = json.RawMessage("null")
		}
		if k == "retry-prompt" && name == "" {
			// Feedback on the model's output, not on a tool: the model sees
			// it as a user message.
			m.Role = models.RoleUser
			if s, ok := stringField(p, "content"); ok {
				m.Content = s
			} else {
				m.Content, keep = string(compact(content)), true
			}
			return m, keep, true, nil
		}
		if name == "" {
			return m, false, false, bad("tool_name", "missing or empty")
		}
		m.Role, m.ToolCallID, m.ToolName = models.RoleTool, id, name
		m.Content = string(compact(content))
		if args, ok := calls[id]; ok {
			m.ToolArguments = args
		}
	default:
		return m, false, false, nil // kept whole
	}
	return m, keep, true, nil
}

// responseRow maps a response to one assistant row.
func (in *Ingested) responseRow(i int, env map[string]json.RawMessage, parts []map[string]json.RawMessage, kinds []string, calls map[string]json.RawMessage) error {
	m := models.HistoryMessage{Role: models.RoleAssistant}
	src := source{Message: env, Parts: make([]map[string]json.RawMessage, len(parts))}
	var texts []string
	var toolCalls []models.ToolCall
	for j, p := range parts {
		k := kinds[j]
		bad := func(f, format string, a ...any) error {
			return &models.FieldError{Index: i, Field: fmt.Sprintf("parts[%d].%s", j, f), Reason: k + " part: " + fmt.Sprintf(format, a...)}
		}
		src.Parts[j] = p
		switch k {
		case "text":
			s, ok := stringField(p, "content")
			if !ok {
				return bad("content", "must be a string")
			}
			texts = append(texts, s)
			src.FromRow = append(src.FromRow, j)
			src.Lens = append(src.Lens, utf8.RuneCountInString(s))
			src.Parts[j] = without(p, "content")
		case "tool-call":
			id, ok := stringField(p, "tool_call_id")
			if !ok || id == "" {
				return bad("tool_call_id", "missing or empty")
			}
			name, ok := stringField(p, "tool_name")
			if !ok || name == "" {
				return bad("tool_name", "missing or empty")
			}
			args := bytes.TrimSpace(p["args"])
			var argText string
			switch {
			case len(args) == 0 || string(args) == "null":
				args, argText = nil, "{}"
			case args[0] == '"':
				_ = json.Unmarshal(args, &argText)
				if t := bytes.TrimSpace([]byte(argText)); len(t) > 0 && t[0] == '{' && json.Valid(t) {
					args = compact(t) // the object the string holds: what the peer's readers expect
				}
			case args[0] == '{':
				args = compact(args)
				argText = string(args)
			default:
				return bad("args", "must be an object, a string or null")
			}
			if args != nil {
				calls[id] = args
			}
			toolCalls = append(toolCalls, models.ToolCall{ID: id, Name: name, Arguments: argText})
		}
	}
	if len(src.FromRow) < 2 {
		src.Lens = nil
	}
	m.Content = strings.Join(texts, textJoin)
	if ts, ok := stringField(env, "timestamp"); ok {
		if _, err := models.ParseTimestamp(ts); err != nil {
			return &models.FieldError{Index: i, Field: "timestamp", Reason: fmt.Sprintf("not an ISO-8601 time: %q", truncateRunes(ts, 40))}
		}
		m.Timestamp = &ts
	}
	m.ToolCalls = toolCalls
	if u := bytes.TrimSpace(env["usage"]); len(u) > 0 && u[0] == '{' {
		m.Extra = append(m.Extra, models.Field{Key: "usage", Value: compact(u)})
	}
	b, err := marshal(src)
	if err != nil {
		return &models.FieldError{Index: i, Reason: err.Error()}
	}
	m.Extra = append(m.Extra, models.Field{Key: SourceKey, Value: b})
	kind := "response"
	if len(kinds) > 0 {
		kind = kinds[0]
	}
	in.push(m, origin{msg: i, kind: kind})
	return nil
}

// without returns a copy of p without key.
func without(p map[string]json.RawMessage, key string) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(p))
	for k, v := range p {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// marshal is json.Marshal without HTML escaping, so that <, > and & stay as
// they were sent.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

func truncateRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

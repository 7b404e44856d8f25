package convert

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/remstore/remstore/internal/jsonvalid"
	"github.com/remstore/remstore/models"
)

// sourcedRequest is a pydantic-ai request being rebuilt: its envelope and
// the parts of its rows so far.
type sourcedRequest struct {
	env   map[string]json.RawMessage
	parts []part
}

// part is one rebuilt part: the stored part's fields, and the row's
// content where the part takes it (own). The stored map is shared, not
// copied: copying every part to set its content was a tenth of a
// pydantic-ai load (issue 57).
type part struct {
	f       map[string]json.RawMessage
	content json.RawMessage
	own     bool
	// text, when isText, is the row's content as a string, written as JSON
	// only where the part is (content is then unset): encoding it apart
	// and copying it in was a tenth of a pydantic-ai load.
	text   string
	isText bool
}

// get is the part's field k.
func (p part) get(k string) json.RawMessage {
	if k == "content" && p.own {
		if p.isText {
			return jsonString(p.text)
		}
		return p.content
	}
	return p.f[k]
}

// appendField writes the part's field k's value.
func (p part) appendField(b []byte, k string) []byte {
	if k == "content" && p.own && p.isText {
		return appendString(b, p.text)
	}
	return appendRaw(b, p.get(k))
}

// fields is the part as one map (a copy where the content is the row's).
func (p part) fields() map[string]json.RawMessage {
	if !p.own {
		return p.f
	}
	m := make(map[string]json.RawMessage, len(p.f)+1)
	for k, v := range p.f {
		m[k] = v
	}
	m["content"] = p.get("content")
	return m
}

func fieldsOf(parts []part) []map[string]json.RawMessage {
	if parts == nil {
		return nil
	}
	out := make([]map[string]json.RawMessage, len(parts))
	for i, p := range parts {
		out[i] = p.fields()
	}
	return out
}

// sourceOf reads a history message's SourceKey; ok is false when it has none
// or it cannot be read (the message is then converted by the Python service's rules).
func sourceOf(m *models.HistoryMessage) (source, bool) {
	for _, f := range m.Extra {
		if f.Key != SourceKey {
			continue
		}
		var src source
		if decodeSource(f.Value, &src) != nil || (src.Message == nil && len(src.Parts) == 0) {
			return source{}, false
		}
		for _, i := range src.FromRow {
			if i < 0 || i >= len(src.Parts) || src.Parts[i] == nil {
				return source{}, false
			}
		}
		return src, true
	}
	return source{}, false
}

// addSourced rebuilds the parts a row stored by DecodePydanticAI carries,
// with the row's content (cut, when the load compressed it) put back where
// it came from. A response is complete in its one row; a request stays open
// for the rows of its other parts.
func (s *Stream) addSourced(m *models.HistoryMessage, src source) error {
	parts := fillParts(m, src)
	if s.o.SystemPrompt != "" {
		parts = withoutKind(parts, "system-prompt") // Options.SystemPrompt replaces it
	}
	if src.Message != nil {
		if err := s.flushSourced(); err != nil {
			return err
		}
		if rawString(src.Message["kind"]) == "response" {
			return s.emitSourced(src.Message, parts)
		}
		s.req = &sourcedRequest{env: src.Message, parts: parts}
		return nil
	}
	if s.req == nil { // the request's first row is gone (removed)
		s.req = &sourcedRequest{env: map[string]json.RawMessage{"kind": json.RawMessage(`"request"`)}}
	}
	s.req.parts = append(s.req.parts, parts...)
	return nil
}

// fillContent returns src's parts with the row's content in the parts it
// came from (fillParts, as maps).
func fillContent(m *models.HistoryMessage, src source) []map[string]json.RawMessage {
	return fieldsOf(fillParts(m, src))
}

// fillParts returns src's parts with the row's content in the parts it
// came from. Several text parts are split again by their lengths; when the
// content was cut (a long answer, compressed) it all goes to the first of
// them and the others are left out: their text is in the cut.
func fillParts(m *models.HistoryMessage, src source) []part {
	parts := make([]part, len(src.Parts))
	for i, p := range src.Parts {
		parts[i].f = p
	}
	set := func(i int, v json.RawMessage) { parts[i].content, parts[i].own = v, true }
	text := func(i int, t string) { parts[i].text, parts[i].isText, parts[i].own = t, true, true }
	switch n := len(src.FromRow); {
	case n == 1 && !m.Role.IsTool():
		text(src.FromRow[0], m.Content)
	case n == 1:
		set(src.FromRow[0], rowContent(m))
	case n > 1:
		texts, ok := splitTexts(m.Content, src.Lens)
		if m.Compressed || !ok || len(texts) != n {
			text(src.FromRow[0], m.Content)
			drop := map[int]bool{}
			for _, i := range src.FromRow[1:] {
				drop[i] = true
			}
			kept := parts[:0:0]
			for i, p := range parts {
				if !drop[i] {
					kept = append(kept, p)
				}
			}
			return kept
		}
		for k, i := range src.FromRow {
			text(i, texts[k])
		}
	}
	return parts
}

// rowContent is a part's content from its row: a tool result's row holds
// the JSON of the content, any other row the text.
func rowContent(m *models.HistoryMessage) json.RawMessage {
	if m.Role.IsTool() && jsonvalid.Valid([]byte(m.Content)) {
		if strings.ContainsAny(m.Content, " \t\r\n") {
			return compact([]byte(m.Content))
		}
		return json.RawMessage(m.Content) // compact already: json.Compact would copy it as it is
	}
	return jsonString(m.Content)
}

// splitTexts cuts content into pieces of lens code points joined by
// textJoin; ok is false when the lengths do not add up.
func splitTexts(content string, lens []int) ([]string, bool) {
	total := 0
	for _, n := range lens {
		total += n
	}
	if len(lens) == 0 || utf8.RuneCountInString(content) != total+utf8.RuneCountInString(textJoin)*(len(lens)-1) {
		return nil, false
	}
	out := make([]string, 0, len(lens))
	rest := content
	for k, n := range lens {
		i := 0
		for range n {
			_, size := utf8.DecodeRuneInString(rest[i:])
			i += size
		}
		out = append(out, rest[:i])
		rest = rest[i:]
		if k < len(lens)-1 {
			if len(rest) < len(textJoin) || rest[:len(textJoin)] != textJoin {
				return nil, false
			}
			rest = rest[len(textJoin):]
		}
	}
	return out, rest == ""
}

// flushSourced emits the open rebuilt request.
func (s *Stream) flushSourced() error {
	if s.req == nil {
		return nil
	}
	r := s.req
	s.req = nil
	if len(r.parts) == 0 { // it held only a system prompt that Options.SystemPrompt replaced
		return nil
	}
	return s.emitSourced(r.env, r.parts)
}

// withoutKind is parts without those of part_kind kind.
func withoutKind(parts []part, kind string) []part {
	if !slices.ContainsFunc(parts, func(p part) bool { return rawString(p.get("part_kind")) == kind }) {
		return parts
	}
	out := parts[:0:0]
	for _, p := range parts {
		if rawString(p.get("part_kind")) == kind {
			continue
		}
		out = append(out, p)
	}
	return out
}

func (s *Stream) emitSourced(env map[string]json.RawMessage, parts []part) error {
	var b []byte
	if s.rawOnly { // the Writer copies Raw before emit returns: one buffer serves every message
		b = s.scratch[:0]
	}
	b, ok := appendSourced(b, env, parts)
	if s.rawOnly && ok {
		s.scratch = b
	}
	if !ok { // a key that needs escaping: encoding/json writes it
		msg := make(map[string]any, len(env)+1)
		for k, v := range env {
			msg[k] = v
		}
		msg["parts"] = fieldsOf(parts)
		var err error
		if b, err = marshal(msg); err != nil {
			return err
		}
	}
	// The fields beside Raw describe the message for readers of Message (the
	// viewer); Raw is what is written.
	m := Message{Raw: b}
	if s.rawOnly { // WriteStream writes Raw alone
		return s.emit(m)
	}
	str := rawString
	m.Kind, m.ModelName, m.Timestamp = str(env["kind"]), str(env["model_name"]), str(env["timestamp"])
	for _, p := range parts {
		m.Parts = append(m.Parts, Part{PartKind: str(p.get("part_kind")), ToolName: str(p.get("tool_name")), ToolCallID: str(p.get("tool_call_id")),
			Content: p.get("content"), Args: p.get("args"), Timestamp: str(p.get("timestamp"))})
	}
	return s.emit(m)
}

// appendSourced writes a rebuilt message as marshal writes the map of env
// and "parts" (keys sorted, no HTML escaping) without encoding/json: every
// value is compact JSON already (read from a compact source, or made by
// rowContent and jsonString), and validating and compacting each again was
// a quarter of a pydantic-ai load. ok is false, and nothing
// should be used, when a key has a byte that encoding would escape.
func appendSourced(b []byte, env map[string]json.RawMessage, parts []part) ([]byte, bool) {
	keys := make([]string, 0, len(env)+1)
	for k := range env {
		if k != "parts" {
			keys = append(keys, k)
		}
	}
	keys = append(keys, "parts")
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if !plainKey(k) {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		if k != "parts" {
			b = appendRaw(b, env[k])
			continue
		}
		if parts == nil {
			b = append(b, "null"...)
			continue
		}
		b = append(b, '[')
		for j, p := range parts {
			if j > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendRawObject(b, p); !ok {
				return nil, false
			}
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

// appendRawObject writes p with its keys sorted and its values as they are.
func appendRawObject(b []byte, p part) ([]byte, bool) {
	m := p.f
	if m == nil && !p.own {
		return append(b, "null"...), true
	}
	var arr [16]string
	keys := arr[:0]
	for k := range m {
		if !plainKey(k) {
			return nil, false
		}
		if k != "content" || !p.own {
			keys = append(keys, k)
		}
	}
	if p.own {
		keys = append(keys, "content")
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, k...)
		b = append(b, '"', ':')
		b = p.appendField(b, k)
	}
	return append(b, '}'), true
}

// appendRaw is a value as encoding/json writes a json.RawMessage: null when
// empty.
func appendRaw(b []byte, v json.RawMessage) []byte {
	if len(v) == 0 {
		return append(b, "null"...)
	}
	return append(b, v...)
}

// plainKey says k needs no escaping in JSON: letters, digits, '_' and '-'.
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// rawString is the text of a JSON string value, "" for any other value, as
// json.Unmarshal into a string gives it: one without escapes (valid UTF-8)
// is sliced out, not decoded (decoding them was an eighth of a
// pydantic-ai load).
func rawString(v json.RawMessage) string {
	if len(v) == 0 || v[0] == 'n' || v[0] == '{' || v[0] == '[' || v[0] == 't' || v[0] == 'f' {
		return "" // missing, null or not a string (a missing key's value was a failed json.Unmarshal)
	}
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' {
		in := v[1 : n-1]
		if bytes.IndexByte(in, '\\') < 0 && bytes.IndexByte(in, '"') < 0 && utf8.Valid(in) {
			return string(in)
		}
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

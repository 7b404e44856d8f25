package visible

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/remstore/remstore/models"
)

// Source is the value of PydanticAIKey on one row: what a pydantic-ai load
// rebuilds the row's parts from.
type Source struct {
	// Message is the pydantic-ai message without its parts; only on the
	// first row of a message.
	Message map[string]json.RawMessage `json:"message,omitempty"`
	// Parts are the parts this row carries, in order; those listed in
	// FromRow have no content: it is the row's.
	Parts []map[string]json.RawMessage `json:"parts"`
	// FromRow lists the parts whose content is the row's content: one for a
	// request part, every text part for a response.
	FromRow []int `json:"from_row,omitempty"`
	// Lens are the code point lengths of the FromRow parts when there are
	// several, to split the row's content again.
	Lens []int `json:"lens,omitempty"`
}

// rowKinds are the part kinds whose content is a row's text: a part of
// these kinds that does not take the row's content must hold it.
var rowKinds = map[string]bool{
	"system-prompt": true, "user-prompt": true, "text": true, "retry-prompt": true, "retry-feedback": true,
	"tool-return": true, "tool-search-return": true, "capability-load-return": true,
}

// mediaKinds are the pydantic-ai file kinds a model is sent by link.
var mediaKinds = map[string]string{"image-url": "image", "document-url": "document", "audio-url": "audio", "video-url": "video"}

// pydantic reads what a pydantic-ai load sends from src beside the row's
// fields: the parts that take the row's content are its Text; a tool call
// must be one of the row's; a multimodal user prompt adds its files to
// Media; thinking is Reasoning; a file the model made is Media; any other
// part (a built-in tool's call or return, instructions, a compaction) is
// shown whole in Other, as are the request's instructions.
func (v *View) pydantic(m models.HistoryMessage, src *Source) {
	fromRow := map[int]bool{}
	for _, i := range src.FromRow {
		if i < 0 || i >= len(src.Parts) || src.Parts[i] == nil {
			v.withhold(PydanticAIKey+".from_row", "names a part the source does not hold")
			return
		}
		fromRow[i] = true
	}
	if in := src.Message["instructions"]; !isNull(in) && string(in) != `""` {
		v.Other = append(v.Other, Other{From: PydanticAIKey + ".message.instructions", Kind: "instructions", JSON: compact(in)})
	}
	for j, p := range src.Parts {
		field := fmt.Sprintf("%s.parts[%d]", PydanticAIKey, j)
		if p == nil {
			v.withhold(field, "must be an object")
			continue
		}
		if fromRow[j] {
			continue // its content is the row's text
		}
		kind, _ := str(p, "part_kind")
		switch {
		case kind == "tool-call":
			v.pydanticCall(field, m, p)
		case kind == "user-prompt":
			v.userPrompt(field, m, p)
		case rowKinds[kind]:
			if !sameContent(p["content"], m.Content) {
				v.withhold(field+".content", "a %s part whose content is not the row's: the model would read what no view shows", kind)
			}
		case kind == "thinking":
			text, _ := str(p, "content")
			sig, _ := str(p, "signature")
			id, _ := str(p, "id")
			prov, _ := str(p, "provider_name")
			v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: PydanticAIKey, Provider: prov, Kind: kind, Text: text, Seal: sig, ID: id})
			if d := p["provider_details"]; !isNull(d) {
				v.Other = append(v.Other, Other{From: field + ".provider_details", Kind: "provider_details", JSON: compact(d)})
			}
		case kind == "file":
			if md, ok := binary(field+".content", object(p["content"])); ok {
				v.Media = append(v.Media, md)
				continue
			}
			v.Other = append(v.Other, Other{From: field, Kind: kind, JSON: wholePart(p)})
		default:
			v.Other = append(v.Other, Other{From: field, Kind: kind, JSON: wholePart(p)})
		}
	}
}

// pydanticCall holds a tool-call part to one of the row's tool calls.
func (v *View) pydanticCall(field string, m models.HistoryMessage, p map[string]json.RawMessage) {
	id, _ := str(p, "tool_call_id")
	name, _ := str(p, "tool_name")
	args := bytes.TrimSpace(p["args"])
	text := "{}"
	switch {
	case isNull(args):
	case args[0] == '"':
		_ = json.Unmarshal(args, &text)
	default:
		text = string(compact(args))
	}
	for _, c := range m.ToolCalls {
		if c.ID == id && c.Name == name && (c.Arguments == text || models.SameJSON(c.Arguments, text) ||
			(c.Arguments == "" && text == "{}")) {
			return
		}
	}
	v.withhold(field, "a tool call (%q) the row's tool_calls do not hold: the model would be sent a call no view shows", id)
}

// userPrompt reads a user prompt that does not take the row's content: a
// multimodal list, whose text items are the row's text (joined by a
// newline) and whose files are Media.
func (v *View) userPrompt(field string, m models.HistoryMessage, p map[string]json.RawMessage) {
	var items []json.RawMessage
	if json.Unmarshal(p["content"], &items) != nil {
		if !sameContent(p["content"], m.Content) {
			v.withhold(field+".content", "a user-prompt part whose content is not the row's: the model would read what no view shows")
		}
		return
	}
	var texts []string
	for k, it := range items {
		at := fmt.Sprintf("%s.content[%d]", field, k)
		var t string
		if json.Unmarshal(it, &t) == nil {
			texts = append(texts, t)
			continue
		}
		o := object(it)
		kind, _ := str(o, "kind")
		switch {
		case o == nil:
			v.withhold(at, "must be a text or a file object")
		case mediaKinds[kind] != "":
			url, _ := str(o, "url")
			if url == "" {
				v.withhold(at+".url", "missing: a %s part links its file", kind)
				continue
			}
			mt, _ := str(o, "media_type")
			name, _ := str(o, "identifier")
			v.Media = append(v.Media, Media{From: at, Kind: mediaKinds[kind], URL: url, MediaType: mt, Name: name})
		case kind == "binary":
			if md, ok := binary(at, o); ok {
				v.Media = append(v.Media, md)
			} else {
				v.withhold(at+".data", "must be the file's bytes (base64)")
			}
		case kind == "cache-point": // a marker for the provider's cache: nothing the model reads
		default:
			v.Other = append(v.Other, Other{From: at, Kind: kind, JSON: compact(it)})
		}
	}
	if strings.Join(texts, "\n") != m.Content {
		v.withhold(field+".content", "its text items are not the row's text: the model would read what no view shows")
	}
}

// binary is pydantic-ai's BinaryContent as Media.
func binary(field string, o map[string]json.RawMessage) (Media, bool) {
	data, ok := str(o, "data")
	if !ok {
		return Media{}, false
	}
	mt, _ := str(o, "media_type")
	name, _ := str(o, "identifier")
	kind := "file"
	for _, k := range []string{"image", "audio", "video"} {
		if strings.HasPrefix(mt, k+"/") {
			kind = k
		}
	}
	if mt == "application/pdf" || strings.HasPrefix(mt, "text/") {
		kind = "document"
	}
	return Media{From: field, Kind: kind, Data: data, MediaType: mt, Name: name}, true
}

// sameContent says a part's content is the row's text: the same string,
// or, for a content that is not one, the same JSON.
func sameContent(raw json.RawMessage, text string) bool {
	if s, ok := str(map[string]json.RawMessage{"c": raw}, "c"); ok {
		return s == text
	}
	if isNull(raw) {
		return text == "" || text == "null"
	}
	c := string(compact(raw))
	return c == text || models.SameJSON(c, text)
}

// wholePart is a part's JSON with its keys sorted.
func wholePart(p map[string]json.RawMessage) json.RawMessage {
	b, err := json.Marshal(p)
	if err != nil {
		return nil
	}
	return b
}

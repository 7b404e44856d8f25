package visible

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/remstore/remstore/models"
)

// A reasoning item is kept only in a form its provider issued and can
// check, and never as free text that would become model input:
//
//   - Anthropic: a thinking block with its signature (the signature covers
//     the thinking text), or a redacted thinking block;
//   - OpenAI: a reasoning item, by its id and the encrypted content the
//     provider issued; its summary and content carry no text;
//   - Google: a thought part with its thought signature, or the thought
//     signature of the answer's text or of one of its calls (a call's
//     item may hold none: Gemini made the call unsigned, and nothing of it
//     reaches a model).
//
// Anything else of these providers is withheld, naming the field; items of
// other providers reach no model and are in no view.

// reasoningItems reads a ReasoningKey value.
func (v *View) reasoningItems(role models.Role, raw json.RawMessage) {
	if role.Normalize() != models.RoleAssistant {
		v.withhold(ReasoningKey, "only an assistant message carries reasoning (role %q)", string(role))
		return
	}
	var items []map[string]json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		v.withhold(ReasoningKey, `must be a list of {"provider", "item"} objects`)
		return
	}
	for j, it := range items {
		at := fmt.Sprintf("%s[%d]", ReasoningKey, j)
		p, _ := str(it, "provider")
		item := it["item"]
		field := at + ".item"
		switch p {
		case Anthropic:
			v.anthropicItem(field, item)
		case OpenAI:
			v.openAIItem(field, ReasoningKey, item)
		case Google:
			v.googleItem(field, item)
		}
	}
}

// only withholds the first key of o outside keys whose value is not null.
func (v *View) only(field string, o map[string]json.RawMessage, what string, keys ...string) bool {
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if !slices.Contains(keys, k) && !isNull(o[k]) {
			v.withhold(field+"."+k, "not a key of %s (the keys are %s): it would reach the model unseen", what, joinKeys(keys))
			return false
		}
	}
	return true
}

func joinKeys(keys []string) string {
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += k
	}
	return s
}

func (v *View) anthropicItem(field string, raw json.RawMessage) {
	o := object(raw)
	if o == nil {
		v.withhold(field, "not an Anthropic thinking block")
		return
	}
	kind, _ := str(o, "type")
	switch kind {
	case "thinking":
		if !v.only(field, o, "a thinking block", "type", "thinking", "signature") {
			return
		}
		text, ok := str(o, "thinking")
		if !ok {
			v.withhold(field+".thinking", "must be a string")
			return
		}
		sig, _ := str(o, "signature")
		if sig == "" {
			v.withhold(field+".signature", "thinking is kept only with the signature Anthropic gave it: unsigned, it is free text the model would read as its own")
			return
		}
		v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: ReasoningKey, Provider: Anthropic, Kind: kind, Text: text, Seal: sig})
	case "redacted_thinking":
		if !v.only(field, o, "a redacted thinking block", "type", "data") {
			return
		}
		data, _ := str(o, "data")
		if data == "" {
			v.withhold(field+".data", "a redacted thinking block carries the data Anthropic gave it")
			return
		}
		v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: ReasoningKey, Provider: Anthropic, Kind: kind, Seal: data})
	default:
		v.withhold(field+".type", "%q is not a thinking or redacted_thinking block", kind)
	}
}

// openAIItem reads a Responses reasoning item (under ReasoningKey, or an
// Agents SDK item under AgentsKey).
func (v *View) openAIItem(field, source string, raw json.RawMessage) {
	o := object(raw)
	if o == nil {
		v.withhold(field, "not an OpenAI reasoning item")
		return
	}
	if kind, _ := str(o, "type"); kind != "reasoning" {
		v.withhold(field+".type", `must be "reasoning"`)
		return
	}
	if !v.only(field, o, "a reasoning item", "type", "id", "summary", "encrypted_content", "status", "content") {
		return
	}
	id, _ := str(o, "id")
	enc, _ := str(o, "encrypted_content")
	if source == ReasoningKey && id == "" {
		v.withhold(field+".id", "missing: a reasoning item is sent back by the id OpenAI gave it")
		return
	}
	for _, k := range []string{"summary", "content"} {
		if !isNull(o[k]) && !emptyTexts(o[k]) {
			v.withhold(field+"."+k, "reasoning %s text is free text the provider does not check; keep the id and encrypted_content only (summary [])", k)
			return
		}
	}
	v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: source, Provider: OpenAI, Kind: "reasoning", ID: id, Seal: enc})
}

// emptyTexts says raw is a list whose entries carry no text.
func emptyTexts(raw json.RawMessage) bool {
	var list []map[string]json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return false
	}
	for _, e := range list {
		for k, x := range e {
			if k != "type" && !isNull(x) && string(x) != `""` {
				return false
			}
		}
	}
	return true
}

// googleItem reads remgenai's item: {"on": "thought", "part": a thought
// part}, or {"on": "text"|"call", "signature", "call"}; a call's item
// without a signature says Gemini made that call unsigned.
func (v *View) googleItem(field string, raw json.RawMessage) {
	o := object(raw)
	if o == nil {
		v.withhold(field, "not a genai reasoning item")
		return
	}
	on, _ := str(o, "on")
	switch on {
	case "thought":
		if !v.only(field, o, "a genai thought item", "on", "part") {
			return
		}
		part := object(o["part"])
		if part == nil {
			v.withhold(field+".part", "must be a genai thought part")
			return
		}
		pf := field + ".part"
		if string(part["thought"]) != "true" {
			v.withhold(pf+".thought", "not a thought part: only thought parts are kept as reasoning (text, calls, results and files are the row's)")
			return
		}
		if !v.only(pf, part, "a thought part", "thought", "text", "thoughtSignature") {
			return
		}
		text, _ := str(part, "text")
		sig, ok := signature(part["thoughtSignature"])
		if !ok {
			v.withhold(pf+".thoughtSignature", "a thought is kept only with the signature Gemini gave it (base64)")
			return
		}
		v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: ReasoningKey, Provider: Google, Kind: "thought", Text: text, Seal: sig})
	case "text", "call":
		if !v.only(field, o, "a genai signature item", "on", "signature", "call") {
			return
		}
		sig, ok := signature(o["signature"])
		unsigned := on == "call" && isNull(o["signature"])
		if !ok && !unsigned {
			v.withhold(field+".signature", "must be the thought signature Gemini gave (base64)")
			return
		}
		call := 0
		if on == "call" {
			if isNull(o["call"]) {
				o["call"] = json.RawMessage("0")
			}
			if json.Unmarshal(o["call"], &call) != nil || call < 0 {
				v.withhold(field+".call", "must be a call number")
				return
			}
		} else if !isNull(o["call"]) && string(o["call"]) != "0" {
			v.withhold(field+".call", "a text signature names no call")
			return
		}
		kind := "signature"
		if unsigned {
			// Gemini made the call and signed it not: it goes back with
			// no signature, as Gemini sent it (a call no such item marks
			// came from another writer and gets the skip value).
			kind = "unsigned"
		}
		v.Reasoning = append(v.Reasoning, Reasoning{From: field, Source: ReasoningKey, Provider: Google, Kind: kind, On: on, Call: call, Seal: sig})
	default:
		v.withhold(field+".on", "%q is not thought, text or call", on)
	}
}

// signature is a non-empty base64 signature as stored (as encoding/json
// writes bytes).
func signature(raw json.RawMessage) (string, bool) {
	var s string
	if isNull(raw) || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", false
	}
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return "", false
	}
	return s, true
}

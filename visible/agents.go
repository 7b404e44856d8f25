package visible

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/remstore/remstore/models"
)

// agentsRoles maps an Agents SDK message's role to its row's, as the Python
// client's item_to_message does (python/src/remstore/agents.py).
var agentsRoles = map[string]models.Role{"user": models.RoleUser, "system": models.RoleSystem,
	"developer": models.RoleSystem, "assistant": models.RoleAssistant}

// agents reads the Agents SDK item a load hands back as it is (AgentsKey).
// The item is mapped to a row the way the Python client maps it, and role,
// text, call id and tool calls must be the row's; a message's images,
// files and audio are Media, its annotations Other; a reasoning item keeps
// only what OpenAI issued (reasoning.go); any other item (a hosted tool's
// call and output, a shell call's output) is shown whole in Other, on an
// assistant row without text.
func (v *View) agents(m models.HistoryMessage, raw json.RawMessage) {
	it := object(raw)
	if it == nil {
		v.withhold(AgentsKey, "must be an object: an Agents SDK item")
		return
	}
	kind, hasKind := str(it, "type")
	if !hasKind && !isNull(it["type"]) {
		v.withhold(AgentsKey+".type", "must be a string")
		return
	}
	role, _ := str(it, "role")
	var want models.HistoryMessage
	switch {
	case (kind == "" || kind == "message") && agentsRoles[role] != "":
		text, ok := v.agentsContent(AgentsKey+".content", it["content"])
		if !ok {
			return
		}
		want = models.HistoryMessage{Role: agentsRoles[role], Content: text}
	case kind == "function_call":
		id, _ := str(it, "call_id")
		name, _ := str(it, "name")
		args, ok := str(it, "arguments")
		if a := bytes.TrimSpace(it["arguments"]); !ok && len(a) > 0 && string(a) != "null" {
			args = string(compact(a)) // an object given as one: kept as its text, as a store keeps it
		}
		if args == "" {
			args = "{}"
		}
		want = models.HistoryMessage{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: id, Name: name, Arguments: args}}}
	case kind == "function_call_output":
		id, _ := str(it, "call_id")
		out, ok := str(it, "output")
		if !ok {
			if out, ok = v.agentsContent(AgentsKey+".output", it["output"]); !ok {
				return
			}
		}
		want = models.HistoryMessage{Role: models.RoleTool, Content: out, ToolCallID: id}
	case kind == "reasoning":
		want = models.HistoryMessage{Role: models.RoleAssistant}
		v.openAIItem(AgentsKey, AgentsKey, raw)
	default: // a hosted tool's call, a shell call's output, ...: an answer without text
		want = models.HistoryMessage{Role: models.RoleAssistant}
		v.Other = append(v.Other, Other{From: AgentsKey, Kind: kind, JSON: compact(raw)})
	}
	say := func(field string, item, row any) {
		v.withhold(AgentsKey, "the item gives %s %q, the message has %q: the Agents SDK would be sent what no other view shows", field, fmt.Sprint(item), fmt.Sprint(row))
	}
	switch {
	case m.Role.Normalize() != want.Role.Normalize():
		say("role", want.Role, m.Role)
	// A long answer comes back cut; its item keeps the whole text.
	case !m.Compressed && m.Content != want.Content && !models.SameJSON(m.Content, want.Content):
		say("content", truncate(want.Content, 40), truncate(m.Content, 40))
	case want.Role == models.RoleTool && m.ToolCallID != want.ToolCallID:
		say("tool_call_id", want.ToolCallID, m.ToolCallID)
	case !slices.EqualFunc(m.ToolCalls, want.ToolCalls, func(a, b models.ToolCall) bool {
		return a.ID == b.ID && a.Name == b.Name && (a.Arguments == b.Arguments || models.SameJSON(a.Arguments, b.Arguments))
	}):
		v.withhold(AgentsKey, "the item's function calls (%d) are not the message's tool_calls (%d): the Agents SDK would be sent calls no other view shows",
			len(want.ToolCalls), len(m.ToolCalls))
	}
}

// agentsContent is a content's text as the Python client reads it: a
// string, or the text (or refusal) of each part joined by a blank line;
// any other JSON value is compared as JSON. A part's image, file or audio
// is Media, an answer's annotations Other; a part of another type is
// withheld. ok is false when something was withheld.
func (v *View) agentsContent(field string, raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if isNull(raw) {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw), true
	}
	var out []string
	for k, pr := range parts {
		at := fmt.Sprintf("%s[%d]", field, k)
		p := object(pr)
		if p == nil {
			continue // the Python client skips it, and so does the SDK
		}
		kind, _ := str(p, "type")
		switch kind {
		case "input_text", "output_text", "text", "refusal", "summary_text", "":
			if t, ok := str(p, "text"); ok {
				out = append(out, t)
			} else if t, ok := str(p, "refusal"); ok {
				out = append(out, t)
			}
			for _, key := range []string{"annotations", "logprobs"} {
				if a := p[key]; !isNull(a) && string(bytes.TrimSpace(a)) != "[]" {
					v.Other = append(v.Other, Other{From: at + "." + key, Kind: key, JSON: compact(a)})
				}
			}
		case "input_image":
			url, _ := str(p, "image_url")
			id, _ := str(p, "file_id")
			if url == "" && id == "" {
				v.withhold(at, "an input_image with neither image_url nor file_id")
				return "", false
			}
			v.Media = append(v.Media, Media{From: at, Kind: "image", URL: url, FileID: id})
		case "input_file":
			md := Media{From: at, Kind: "file"}
			md.URL, _ = str(p, "file_url")
			md.FileID, _ = str(p, "file_id")
			md.Data, _ = str(p, "file_data")
			md.Name, _ = str(p, "filename")
			if md.URL == "" && md.FileID == "" && md.Data == "" {
				v.withhold(at, "an input_file with none of file_url, file_id and file_data")
				return "", false
			}
			v.Media = append(v.Media, md)
		case "input_audio":
			a := object(p["input_audio"])
			data, _ := str(a, "data")
			format, _ := str(a, "format")
			if data == "" {
				v.withhold(at+".input_audio.data", "missing: an input_audio part carries its bytes")
				return "", false
			}
			v.Media = append(v.Media, Media{From: at, Kind: "audio", Data: data, MediaType: format})
		default:
			v.withhold(at+".type", "%q parts are not shown in any view: the Agents SDK would send the model what no view shows", kind)
			return "", false
		}
	}
	return strings.Join(out, "\n\n"), true
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

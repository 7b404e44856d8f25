package remgenai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Provider is this package's name in the reasoning items it keeps.
const Provider = "google"

// skipSignature is the thought signature Google documents for function
// calls that Gemini did not produce.
const skipSignature = "skip_thought_signature_validator"

// inventedID prefixes the ids FromResponse gives calls that came without.
const inventedID = "genai-"

// Options shapes a request.
type Options struct {
	// System, when set, is the system instruction. Stored system messages
	// are not sent, as in the pydantic-ai history: the system
	// prompt is the caller's.
	System string
}

// item is one kept reasoning item: a thought part whole, or the thought
// signature of the answer's text or of its call number Call.
type item struct {
	On        string          `json:"on"` // thought, text or call
	Part      json.RawMessage `json:"part,omitempty"`
	Signature []byte          `json:"signature,omitempty"`
	Call      int             `json:"call,omitempty"`
}

// Contents is the history as genai contents: the system instruction (nil
// when there is none), user messages as user text, each assistant message
// as one model content (thoughts, text, one FunctionCall part per call:
// stored, or synthesized from results that answer none, convert.Pair), its
// results as one user content of FunctionResponse parts.
func Contents(history []models.HistoryMessage, o Options) (*genai.Content, []*genai.Content, error) {
	var system []*genai.Part
	if o.System != "" {
		system = append(system, genai.NewPartFromText(o.System))
	}
	out := make([]*genai.Content, 0, len(history))
	err := sdk.Walk(history, func(i int, m *models.HistoryMessage, t *convert.Turn) error {
		if t == nil {
			if m.Role != models.RoleUser {
				return sdk.Errorf(i, "role", "%q has no genai form", string(m.Role))
			}
			out = append(out, genai.NewContentFromText(m.Content, genai.RoleUser))
			return nil
		}
		var parts []*genai.Part
		var textSig []byte
		callSig := map[int][]byte{}
		unsigned := map[int]bool{} // calls Gemini made without a signature
		if t.Assistant != nil {
			rs, err := sdk.ReasoningFor(i, t, Provider)
			if err != nil {
				return err
			}
			for _, r := range rs {
				sig, _ := base64.StdEncoding.DecodeString(r.Seal) // the view holds base64 only
				switch {
				case r.Kind == "thought":
					parts = append(parts, &genai.Part{Thought: true, Text: r.Text, ThoughtSignature: sig})
				case r.Kind == "unsigned":
					unsigned[r.Call] = true
				case r.On == "text":
					textSig = sig
				case r.On == "call":
					callSig[r.Call] = sig
				}
			}
			if t.View.Text != "" {
				p := genai.NewPartFromText(t.View.Text)
				p.ThoughtSignature = textSig
				parts = append(parts, p)
			}
		}
		for k, c := range t.Calls {
			args, err := object(convert.ArgsObject(c))
			if err != nil {
				return sdk.Errorf(i, "tool_calls", "%v", err)
			}
			sig := callSig[k]
			if k == 0 && len(sig) == 0 && !unsigned[k] {
				// A call another writer stored has no signature, which
				// Gemini 3 refuses; this is the value Google documents for
				// calls that did not come from Gemini (pydantic-ai sends it).
				// A call Gemini made unsigned goes back as Gemini sent it.
				sig = []byte(skipSignature)
			}
			parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: sentID(c.ID), Name: c.Name, Args: args},
				ThoughtSignature: sig})
		}
		if len(parts) > 0 {
			out = append(out, genai.NewContentFromParts(parts, genai.RoleModel))
		}
		if len(t.Results) > 0 {
			res := make([]*genai.Part, len(t.Results))
			for k, r := range t.Results {
				res[k] = &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: sentID(r.CallID), Name: r.Name, Response: sdk.ResultObject(r.Content)}}
			}
			out = append(out, genai.NewContentFromParts(res, genai.RoleUser))
		}
		return nil
	})
	if len(out) > 0 && out[0].Role == genai.RoleModel {
		// Gemini wants a user turn first; an empty one, as pydantic-ai sends.
		out = append([]*genai.Content{genai.NewContentFromText("", genai.RoleUser)}, out...)
	}
	var sys *genai.Content
	if len(system) > 0 {
		sys = genai.NewContentFromParts(system, genai.RoleUser)
	}
	return sys, out, err
}

func sentID(id string) string {
	if strings.HasPrefix(id, inventedID) {
		return ""
	}
	return id
}

// object decodes a JSON object keeping its numbers exact; anything after
// the object is an error (the text is then not an object).
func object(raw []byte) (map[string]any, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not a JSON object: %.60s", raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// ToolResult is the message to store for a call's FunctionResponse: its
// content is the response object's JSON, which Contents sends back as it is.
func ToolResult(c models.ToolCall, resp map[string]any) (models.HistoryMessage, error) {
	b, err := json.Marshal(resp)
	if err != nil {
		return models.HistoryMessage{}, sdk.Errorf(-1, "response", "%v", err)
	}
	return sdk.ToolResult(c, string(b)), nil
}

// FromResponse is the assistant message to store for the first candidate:
// its text, its function calls, its signed thoughts and thought
// signatures (an unsigned thought is not kept), the model and usage.
func FromResponse(r *genai.GenerateContentResponse) (models.HistoryMessage, error) {
	if r == nil || len(r.Candidates) == 0 || r.Candidates[0].Content == nil {
		return models.HistoryMessage{}, sdk.Errorf(-1, "candidates", "the response has no candidate content")
	}
	m := models.HistoryMessage{Role: models.RoleAssistant}
	var texts []string
	var items []json.RawMessage
	add := func(it item) {
		b, _ := json.Marshal(it)
		items = append(items, b)
	}
	for j, p := range r.Candidates[0].Content.Parts {
		at := func(k string) string { return "candidates[0].content.parts[" + strconv.Itoa(j) + "]." + k }
		switch {
		case p == nil:
			return models.HistoryMessage{}, sdk.Errorf(-1, at("part"), "null part")
		case p.Thought:
			// A thought is kept with its signature, as the thought part
			// Gemini sent (package visible); an unsigned thought summary
			// is display text Gemini does not need back, and is not kept.
			if len(p.ThoughtSignature) > 0 {
				b, _ := json.Marshal(&genai.Part{Thought: true, Text: p.Text, ThoughtSignature: p.ThoughtSignature})
				add(item{On: "thought", Part: b})
			}
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			args, err := json.Marshal(fc.Args)
			if err != nil || fc.Args == nil {
				args = []byte("{}")
			}
			id := fc.ID
			if id == "" {
				id = inventedID + strconv.Itoa(len(m.ToolCalls)) + "-" + fc.Name
			}
			call := models.ToolCall{ID: id, Name: fc.Name, Arguments: string(args)}
			if err := call.Check(); err != nil {
				fe, _ := models.AsFieldError(err)
				return models.HistoryMessage{}, sdk.Errorf(-1, at("functionCall."+fe.Field), "%s", fe.Reason)
			}
			// Signed or not, the call is marked as Gemini's: Contents sends
			// it back as it came, never with the skip value.
			add(item{On: "call", Call: len(m.ToolCalls), Signature: p.ThoughtSignature})
			m.ToolCalls = append(m.ToolCalls, call)
		case p.Text != "" && p.InlineData == nil && p.FileData == nil && p.ExecutableCode == nil && p.CodeExecutionResult == nil:
			texts = append(texts, p.Text)
			if len(p.ThoughtSignature) > 0 {
				add(item{On: "text", Signature: p.ThoughtSignature})
			}
		default:
			b, _ := json.Marshal(p)
			return models.HistoryMessage{}, sdk.Errorf(-1, at("part"), "only text, thoughts and function calls are kept: %.80s", b)
		}
	}
	m.Content = strings.Join(texts, "")
	sdk.WithReasoning(&m, Provider, items)
	var in, out, total int64
	if u := r.UsageMetadata; u != nil {
		in, out, total = int64(u.PromptTokenCount), int64(u.CandidatesTokenCount), int64(u.TotalTokenCount)
	}
	sdk.WithUsage(&m, r.ModelVersion, in, out, total)
	return m, nil
}

// LookupDeclaration is the REM LOOKUP tool as a genai function declaration.
func LookupDeclaration() *genai.FunctionDeclaration {
	return &genai.FunctionDeclaration{Name: sdk.LookupToolName, Description: sdk.LookupToolDescription,
		ParametersJsonSchema: sdk.LookupToolParameters()}
}

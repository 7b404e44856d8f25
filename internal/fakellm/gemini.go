package fakellm

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// SkipSignature is the thought signature Google documents for function
// calls Gemini did not make: Gemini takes it in place of its own.
const SkipSignature = "skip_thought_signature_validator"

// Gemini serves POST /v1beta/models/{model}:generateContent as the Gemini
// API does, from Decide, recording each body, and :streamGenerateContent as
// a stream of chunks. With thoughts included, an
// answer with calls starts with a thought part and carries a thought
// signature on its first call, which a request must send back on that call
// (Gemini 3 answers 400 without it).
func Gemini(rec *Recorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model, ok := strings.CutPrefix(r.URL.Path, "/v1beta/models/")
		stream := strings.HasSuffix(model, ":streamGenerateContent")
		if !ok || r.Method != http.MethodPost || !strings.HasSuffix(model, ":generateContent") && !stream {
			fail(w, 404, "no route %s %s", r.Method, r.URL.Path)
			return
		}
		model = strings.TrimSuffix(strings.TrimSuffix(model, ":generateContent"), ":streamGenerateContent")
		body, _ := io.ReadAll(r.Body)
		rec.add(body)
		var req struct {
			Contents []struct {
				Role  string       `json:"role"`
				Parts []geminiPart `json:"parts"`
			} `json:"contents"`
			SystemInstruction *struct {
				Parts []geminiPart `json:"parts"`
			} `json:"systemInstruction"`
			GenerationConfig struct {
				ThinkingConfig struct {
					IncludeThoughts bool `json:"includeThoughts"`
				} `json:"thinkingConfig"`
			} `json:"generationConfig"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			fail(w, 400, "bad body: %v", err)
			return
		}
		var msgs []Msg
		if req.SystemInstruction != nil {
			var s string
			for _, p := range req.SystemInstruction.Parts {
				s += p.Text
			}
			msgs = append(msgs, Msg{Role: "system", Text: s})
		}
		thoughts := req.GenerationConfig.ThinkingConfig.IncludeThoughts
		for i, c := range req.Contents {
			role := map[string]string{"user": "user", "model": "assistant"}[c.Role]
			if role == "" {
				fail(w, 400, "contents[%d].role %q", i, c.Role)
				return
			}
			nm := Msg{Role: role}
			signed := false
			for j, p := range c.Parts {
				switch {
				case p.Thought:
				case p.FunctionCall != nil:
					if p.ThoughtSignature != "" {
						// Its own signatures, or the value Google documents
						// for calls Gemini did not make.
						if sig, _ := base64.StdEncoding.DecodeString(p.ThoughtSignature); !strings.HasPrefix(string(sig), "sig:") && string(sig) != SkipSignature {
							fail(w, 400, "contents[%d].parts[%d]: invalid thought signature", i, j)
							return
						}
						signed = true
					}
					nm.Calls = append(nm.Calls, Call{ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Args: string(p.FunctionCall.Args)})
				case p.FunctionResponse != nil:
					content := responseText(p.FunctionResponse.Response)
					nm.Results = append(nm.Results, Result{ID: p.FunctionResponse.ID, Name: p.FunctionResponse.Name, Content: content})
				default:
					nm.Text += p.Text
				}
			}
			if thoughts && len(nm.Calls) > 0 && !signed {
				fail(w, 400, "Function call is missing a thought_signature in functionCall parts (contents[%d])", i)
				return
			}
			msgs = append(msgs, nm)
		}
		if err := Check(msgs); err != nil {
			fail(w, 400, "%v", err)
			return
		}
		rep := Decide(msgs)
		var parts []map[string]any
		if thoughts && rep.Thinking != "" {
			parts = append(parts, map[string]any{"text": rep.Thinking, "thought": true})
		}
		if rep.Text != "" {
			parts = append(parts, map[string]any{"text": rep.Text})
		}
		for k, c := range rep.Calls {
			p := map[string]any{"functionCall": map[string]any{"id": c.ID, "name": c.Name, "args": json.RawMessage(c.Args)}}
			if k == 0 && thoughts {
				p["thoughtSignature"] = base64.StdEncoding.EncodeToString([]byte("sig:" + rep.Thinking))
			}
			parts = append(parts, p)
		}
		in, out := tokens(string(body)), tokens(rep.Text)+int64(len(rep.Calls))
		tail := map[string]any{"usageMetadata": map[string]any{"promptTokenCount": in, "candidatesTokenCount": out, "totalTokenCount": in + out},
			"modelVersion": model + "-fake", "responseId": "resp-fake"}
		if stream {
			rec.streamed()
			geminiStream(w, parts, tail)
			return
		}
		tail["candidates"] = []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}}
		writeJSON(w, tail)
	})
}

// geminiPart is a part of a request's content.
type geminiPart struct {
	Text             string `json:"text"`
	Thought          bool   `json:"thought"`
	ThoughtSignature string `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
	FunctionResponse *struct {
		ID       string          `json:"id"`
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	} `json:"functionResponse"`
}

// responseText is a function response as the model reads it: a text result
// wrapped in an object of one key ("output" as Google's docs write it, "raw"
// and "return_value" as pydantic-ai does) is its text; any other, its JSON.
func responseText(raw json.RawMessage) string {
	var out map[string]json.RawMessage
	if json.Unmarshal(raw, &out) == nil && len(out) == 1 {
		for _, k := range []string{"output", "raw", "return_value"} {
			var s string
			if v, ok := out[k]; ok && json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(raw)
}

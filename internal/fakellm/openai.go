package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// OpenAI serves POST /chat/completions and POST /responses as OpenAI does,
// from Decide, recording each body; a Chat Completions request with stream
// set is answered as a stream of chunks.
func OpenAI(rec *Recorder) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /chat/completions", chatCompletions(rec))
	mux.HandleFunc("POST /responses", responses(rec))
	return mux
}

// chatCompletions answers Chat Completions requests.
func chatCompletions(rec *Recorder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.add(body)
		var req struct {
			Model         string `json:"model"`
			Stream        bool   `json:"stream"`
			StreamOptions struct {
				IncludeUsage bool `json:"include_usage"`
			} `json:"stream_options"`
			Messages []struct {
				Role       string          `json:"role"`
				Content    json.RawMessage `json:"content"`
				ToolCallID string          `json:"tool_call_id"`
				ToolCalls  []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			fail(w, 400, "bad body: %v", err)
			return
		}
		var msgs []Msg
		for _, m := range req.Messages {
			switch m.Role {
			case "tool":
				res := Result{ID: m.ToolCallID, Content: text(m.Content)}
				if n := len(msgs); n > 0 && len(msgs[n-1].Results) > 0 {
					msgs[n-1].Results = append(msgs[n-1].Results, res)
				} else {
					msgs = append(msgs, Msg{Role: "user", Results: []Result{res}})
				}
			default:
				nm := Msg{Role: m.Role, Text: text(m.Content)}
				for _, c := range m.ToolCalls {
					nm.Calls = append(nm.Calls, Call{ID: c.ID, Name: c.Function.Name, Args: c.Function.Arguments})
				}
				msgs = append(msgs, nm)
			}
		}
		if err := Check(msgs); err != nil {
			fail(w, 400, "%v", err)
			return
		}
		rep := Decide(msgs)
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		finish := "stop"
		if rep.Text != "" {
			msg["content"] = rep.Text
		}
		if len(rep.Calls) > 0 {
			var calls []map[string]any
			for _, c := range rep.Calls {
				calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]string{"name": c.Name, "arguments": c.Args}})
			}
			msg["tool_calls"], finish = calls, "tool_calls"
		}
		in, out := tokens(string(body)), tokens(rep.Text)+int64(len(rep.Calls))
		usage := map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
		if req.Stream {
			rec.streamed()
			if !req.StreamOptions.IncludeUsage {
				usage = nil
			}
			chatStream(w, req.Model+"-fake", rep, finish, usage)
			return
		}
		writeJSON(w, map[string]any{"id": "chatcmpl-fake", "object": "chat.completion", "created": 1700000000, "model": req.Model + "-fake",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}},
			"usage":   usage})
	}
}

// responses answers Responses API requests.
func responses(rec *Recorder) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.add(body)
		var req struct {
			Model        string            `json:"model"`
			Stream       bool              `json:"stream"`
			Instructions string            `json:"instructions"`
			Input        []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			fail(w, 400, "bad body: %v", err)
			return
		}
		var msgs []Msg
		if req.Instructions != "" {
			msgs = append(msgs, Msg{Role: "system", Text: req.Instructions})
		}
		reasoned := false
		for _, raw := range req.Input {
			var it struct {
				Type, Role, CallID, Name, Arguments, ID, EncryptedContent string
				Content                                                   json.RawMessage
				Output                                                    json.RawMessage
			}
			if err := json.Unmarshal(raw, &it); err != nil {
				fail(w, 400, "bad item: %v", err)
				return
			}
			var fields map[string]json.RawMessage
			_ = json.Unmarshal(raw, &fields)
			it.CallID, it.EncryptedContent = str(fields["call_id"]), str(fields["encrypted_content"])
			switch it.Type {
			case "", "message":
				msgs = append(msgs, Msg{Role: it.Role, Text: text(it.Content)})
			case "reasoning":
				if !strings.HasPrefix(it.EncryptedContent, "enc:") {
					fail(w, 400, "reasoning item %s without its encrypted_content", it.ID)
					return
				}
				reasoned = true
			case "function_call":
				n := len(msgs)
				if n == 0 || msgs[n-1].Role != "assistant" || len(msgs[n-1].Results) > 0 {
					msgs = append(msgs, Msg{Role: "assistant"})
					n++
				}
				msgs[n-1].Calls = append(msgs[n-1].Calls, Call{ID: it.CallID, Name: it.Name, Args: it.Arguments})
			case "function_call_output":
				res := Result{ID: it.CallID, Content: text(it.Output)}
				if n := len(msgs); n > 0 && len(msgs[n-1].Results) > 0 {
					msgs[n-1].Results = append(msgs[n-1].Results, res)
				} else {
					msgs = append(msgs, Msg{Role: "user", Results: []Result{res}})
				}
			default:
				fail(w, 400, "unexpected item type %q", it.Type)
				return
			}
		}
		_ = reasoned
		if err := Check(msgs); err != nil {
			fail(w, 400, "%v", err)
			return
		}
		rep := Decide(msgs)
		var output []any
		if rep.Thinking != "" {
			output = append(output, map[string]any{"type": "reasoning", "id": "rs_" + idOf(rep), "summary": []any{map[string]any{"type": "summary_text", "text": rep.Thinking}},
				"encrypted_content": "enc:" + rep.Thinking})
		}
		if rep.Text != "" {
			output = append(output, map[string]any{"type": "message", "id": "msg_" + idOf(rep), "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}})
		}
		for _, c := range rep.Calls {
			output = append(output, map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": c.Args, "status": "completed"})
		}
		in, out := tokens(string(body)), tokens(rep.Text)+int64(len(rep.Calls))
		resp := map[string]any{"id": "resp_fake", "object": "response", "created_at": 1700000000, "model": req.Model + "-fake", "status": "completed",
			"output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{},
			"usage": map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": in + out,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}
		if req.Stream {
			rec.streamed()
			responsesStream(w, resp, rep)
			return
		}
		writeJSON(w, resp)
	}
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// idOf names a reply's items after its first call or its text's length, so
// that the same reply gets the same ids in every run.
func idOf(rep Reply) string {
	if len(rep.Calls) > 0 {
		return rep.Calls[0].ID
	}
	return strings.ReplaceAll(strings.ToLower(strings.Fields(rep.Text + " x")[0]), ".", "")
}

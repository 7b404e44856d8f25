package fakellm

import (
	"encoding/json"
	"io"
	"net/http"
)

// Anthropic serves POST /v1/messages as Anthropic does, from Decide,
// recording each body (streamed when the request says stream). With thinking enabled in the request, its answers
// start with a signed thinking block, and a request whose last assistant
// message made tool calls must carry that block back, signature intact, as
// the real API requires.
func Anthropic(rec *Recorder) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.add(body)
		var req struct {
			Model    string          `json:"model"`
			Stream   bool            `json:"stream"`
			System   json.RawMessage `json:"system"`
			Thinking struct {
				Type string `json:"type"`
			} `json:"thinking"`
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			fail(w, 400, "bad body: %v", err)
			return
		}
		var msgs []Msg
		if s := text(req.System); s != "" {
			msgs = append(msgs, Msg{Role: "system", Text: s})
		}
		thinking := req.Thinking.Type == "enabled"
		lastSigned := true
		for i, m := range req.Messages {
			nm := Msg{Role: m.Role}
			var s string
			if json.Unmarshal(m.Content, &s) == nil {
				nm.Text = s
				msgs = append(msgs, nm)
				continue
			}
			var blocks []struct {
				Type      string          `json:"type"`
				Text      string          `json:"text"`
				ID        string          `json:"id"`
				Name      string          `json:"name"`
				ToolUseID string          `json:"tool_use_id"`
				Thinking  string          `json:"thinking"`
				Signature string          `json:"signature"`
				Input     json.RawMessage `json:"input"`
				Content   json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(m.Content, &blocks); err != nil {
				fail(w, 400, "messages[%d].content: %v", i, err)
				return
			}
			signed := false
			for j, b := range blocks {
				switch b.Type {
				case "text":
					nm.Text += b.Text
				case "thinking":
					if b.Signature != sign(b.Thinking) {
						fail(w, 400, "messages[%d].content[%d]: invalid signature in thinking block", i, j)
						return
					}
					signed = true
				case "tool_use":
					nm.Calls = append(nm.Calls, Call{ID: b.ID, Name: b.Name, Args: string(b.Input)})
				case "tool_result":
					nm.Results = append(nm.Results, Result{ID: b.ToolUseID, Content: text(b.Content)})
				default:
					fail(w, 400, "messages[%d].content[%d]: unexpected block type %q", i, j, b.Type)
					return
				}
			}
			if m.Role == "assistant" && len(nm.Calls) > 0 {
				lastSigned = signed
			}
			msgs = append(msgs, nm)
		}
		if thinking && !lastSigned {
			fail(w, 400, "Expected `thinking` or `redacted_thinking`, but found `tool_use`: the assistant's thinking block must be sent back")
			return
		}
		if err := Check(msgs); err != nil {
			fail(w, 400, "%v", err)
			return
		}
		rep := Decide(msgs)
		var content []map[string]any
		if thinking && rep.Thinking != "" {
			content = append(content, map[string]any{"type": "thinking", "thinking": rep.Thinking, "signature": sign(rep.Thinking)})
		}
		if rep.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": rep.Text})
		}
		stop := "end_turn"
		for _, c := range rep.Calls {
			content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + c.ID, "name": c.Name, "input": json.RawMessage(c.Args)})
			stop = "tool_use"
		}
		output := tokens(rep.Text) + int64(len(rep.Calls))
		msg := map[string]any{"id": "msg_fake", "type": "message", "role": "assistant", "model": req.Model + "-fake",
			"content": content, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": tokens(string(body)), "output_tokens": output}}
		if req.Stream {
			rec.streamed()
			anthropicStream(w, msg, content, stop, output)
			return
		}
		writeJSON(w, msg)
	})
	return mux
}

// sign is the fake's thinking signature: what a block must carry back.
func sign(thinking string) string { return "sig:" + thinking }

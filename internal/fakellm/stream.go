package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Streamed answers: each server sends a reply as its API streams it (server-
// sent events), text, thinking and call arguments split into pieces, so that
// a test can compare what a client accumulates with the unstreamed answer.

// Streams is how many answers the server streamed since the last call.
func (r *Recorder) Streams() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.streams
	r.streams = 0
	return n
}

func (r *Recorder) streamed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.streams++
}

// pieces splits s into up to three pieces, on rune boundaries; "" is one
// empty piece.
func pieces(s string) []string {
	r := []rune(s)
	if len(r) < 3 {
		return []string{s}
	}
	a, b := len(r)/3, 2*len(r)/3
	return []string{string(r[:a]), string(r[a:b]), string(r[b:])}
}

// sse writes events as server-sent events: each an optional event name and
// its data (JSON, or a string written as it is).
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) send(event string, data any) {
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	var b []byte
	if str, ok := data.(string); ok {
		b = []byte(str)
	} else {
		b, _ = json.Marshal(data)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", b)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

// chatStream streams a Chat Completions reply: the role, the text in
// pieces, each call's id and name then its arguments in pieces, the finish
// reason, and the usage when include_usage asked for it.
func chatStream(w http.ResponseWriter, model string, rep Reply, finish string, usage map[string]any) {
	s := newSSE(w)
	chunk := func(delta map[string]any, finish any) {
		s.send("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}})
	}
	chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	if rep.Text != "" {
		for _, p := range pieces(rep.Text) {
			chunk(map[string]any{"content": p}, nil)
		}
	}
	for k, c := range rep.Calls {
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, nil)
		for _, p := range pieces(c.Args) {
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": k, "function": map[string]any{"arguments": p}}}}, nil)
		}
	}
	chunk(map[string]any{}, finish)
	if usage != nil {
		s.send("", map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": model,
			"choices": []any{}, "usage": usage})
	}
	s.send("", "[DONE]")
}

// anthropicStream streams a Messages reply as Anthropic does: message_start,
// each block's start, deltas and stop (thinking and its signature, text,
// tool_use input as partial JSON), message_delta with the stop reason and
// the output tokens, message_stop.
func anthropicStream(w http.ResponseWriter, start map[string]any, content []map[string]any, stop string, output int64) {
	s := newSSE(w)
	msg := map[string]any{}
	for k, v := range start {
		msg[k] = v
	}
	msg["content"], msg["stop_reason"] = []any{}, nil
	msg["usage"] = map[string]any{"input_tokens": start["usage"].(map[string]any)["input_tokens"], "output_tokens": 0}
	s.send("message_start", map[string]any{"type": "message_start", "message": msg})
	for i, b := range content {
		delta := func(d map[string]any) {
			s.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
		}
		switch b["type"] {
		case "thinking":
			s.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
			for _, p := range pieces(b["thinking"].(string)) {
				delta(map[string]any{"type": "thinking_delta", "thinking": p})
			}
			delta(map[string]any{"type": "signature_delta", "signature": b["signature"]})
		case "text":
			s.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			for _, p := range pieces(b["text"].(string)) {
				delta(map[string]any{"type": "text_delta", "text": p})
			}
		case "tool_use":
			s.send("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
			in, _ := json.Marshal(b["input"])
			for _, p := range pieces(string(in)) {
				delta(map[string]any{"type": "input_json_delta", "partial_json": p})
			}
		}
		s.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	s.send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": output}})
	s.send("message_stop", map[string]any{"type": "message_stop"})
}

// geminiStream streams a generateContent reply as Gemini does
// (streamGenerateContent?alt=sse): one chunk per piece of thought and of
// text, the thought's signature on its last piece, the calls in one chunk,
// the usage and model on every chunk.
func geminiStream(w http.ResponseWriter, parts []map[string]any, tail map[string]any) {
	s := newSSE(w)
	chunk := func(ps []any, last bool) {
		c := map[string]any{"content": map[string]any{"role": "model", "parts": ps}, "index": 0}
		if last {
			c["finishReason"] = "STOP"
		}
		body := map[string]any{"candidates": []any{c}}
		for k, v := range tail {
			body[k] = v
		}
		s.send("", body)
	}
	var calls []any
	for _, p := range parts {
		if _, ok := p["functionCall"]; ok {
			calls = append(calls, p)
			continue
		}
		text := pieces(p["text"].(string))
		for j, t := range text {
			q := map[string]any{"text": t}
			if p["thought"] == true {
				q["thought"] = true
			}
			if sig, ok := p["thoughtSignature"]; ok && j == len(text)-1 {
				q["thoughtSignature"] = sig
			}
			chunk([]any{q}, false)
		}
	}
	if calls != nil {
		chunk(calls, true)
	} else {
		chunk([]any{}, true)
	}
}

// responsesStream streams a Responses reply as OpenAI does, in short:
// response.created (in progress, no output), the text's deltas, each
// function call's argument deltas, then response.completed with the whole
// response, which a client stores.
func responsesStream(w http.ResponseWriter, resp map[string]any, rep Reply) {
	s := newSSE(w)
	seq := 0
	send := func(typ string, ev map[string]any) {
		ev["type"], ev["sequence_number"] = typ, seq
		seq++
		s.send(typ, ev)
	}
	created := map[string]any{}
	for k, v := range resp {
		created[k] = v
	}
	created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
	send("response.created", map[string]any{"response": created})
	for _, p := range pieces(rep.Text) {
		if p != "" {
			send("response.output_text.delta", map[string]any{"item_id": "msg_" + idOf(rep), "output_index": 0, "content_index": 0, "delta": p, "logprobs": []any{}})
		}
	}
	for k, c := range rep.Calls {
		for _, p := range pieces(c.Args) {
			send("response.function_call_arguments.delta", map[string]any{"item_id": "fc_" + c.ID, "output_index": k, "delta": p})
		}
	}
	send("response.completed", map[string]any{"response": resp})
}

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// AgentSession is a realistic agent conversation as pydantic-ai 2.x writes
// it (the shape of fixtures/pydantic-ai/2-tools.json): per turn a user
// prompt, an answer that calls a tool, the tool's return, and a final
// answer of 1,000 to 3,000 characters; 4 rows a turn once stored. The
// generated load sessions (Turn) are short answers and no sources; an
// agent's session is what a turn loads as pydantic-ai history (issue 45).
func AgentSession(turns int) []byte {
	var msgs []any
	at := time.Date(2026, 11, 24, 5, 48, 0, 0, time.UTC)
	ts := func() string { at = at.Add(1500 * time.Millisecond); return at.Format("2006-01-02T15:04:05.000000Z") }
	usage := map[string]any{"input_tokens": 812, "cache_write_tokens": 0, "cache_read_tokens": 0, "output_tokens": 96,
		"input_audio_tokens": 0, "cache_audio_read_tokens": 0, "output_audio_tokens": 0, "details": map[string]any{}}
	sentence := "The forecast for the coming days shows mild temperatures with scattered clouds, light winds from the west and a chance of rain in the late afternoon. "
	for i := range turns {
		city := []string{"Paris", "Rome", "Lisbon", "Oslo", "Cairo"}[i%5]
		id := fmt.Sprintf("call_%04d", i)
		msgs = append(msgs,
			map[string]any{"kind": "request", "timestamp": ts(), "instructions": nil, "metadata": nil, "parts": []any{
				map[string]any{"part_kind": "user-prompt", "content": fmt.Sprintf("What is the weather in %s this week, and what should I pack? (turn %d)", city, i), "timestamp": ts()}}},
			map[string]any{"kind": "response", "model_name": "gpt-4o-2024-08-06", "provider_name": "openai", "timestamp": ts(), "usage": usage,
				"provider_response_id": "chatcmpl-" + id, "finish_reason": "tool_call", "parts": []any{
					map[string]any{"part_kind": "text", "content": "Let me look up the forecast for " + city + "."},
					map[string]any{"part_kind": "tool-call", "tool_name": "weather", "args": map[string]any{"city": city, "days": 7}, "tool_call_id": id}}},
			map[string]any{"kind": "request", "timestamp": ts(), "instructions": nil, "metadata": nil, "parts": []any{
				map[string]any{"part_kind": "tool-return", "tool_name": "weather", "tool_call_id": id, "timestamp": ts(), "metadata": nil,
					"content": map[string]any{"city": city, "days": []any{
						map[string]any{"day": 1, "celsius": 18, "sky": "cloudy"}, map[string]any{"day": 2, "celsius": 21, "sky": "sunny"},
						map[string]any{"day": 3, "celsius": 16, "sky": "rain"}}}}}},
			map[string]any{"kind": "response", "model_name": "gpt-4o-2024-08-06", "provider_name": "openai", "timestamp": ts(), "usage": usage,
				"provider_response_id": "chatcmpl-" + id + "-2", "finish_reason": "stop", "parts": []any{
					map[string]any{"part_kind": "text", "content": strings.Repeat(sentence, 7+i%14)}}})
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	return b
}

// agentWorkloads store a 50-turn agent session (200 rows) as pydantic-ai
// messages and load it as plain history and as pydantic-ai JSON, the two
// loads side by side (issue 45, item 1: the target is the second within
// 1.5x of the first).
func (e *Env) agentWorkloads(ctx context.Context, _ Sizes) ([]Workload, error) {
	const key, turns = "agent-200", 50
	in, err := convert.DecodePydanticAI(bytes.NewReader(AgentSession(turns)))
	if err != nil {
		return nil, err
	}
	if _, err := e.Store.Store(ctx, key, in.Messages, sessionstore.StoreOptions{Decoded: true}); err != nil {
		return nil, err
	}
	n := len(in.Messages)
	plain := Workload{Name: fmt.Sprintf("agent session %d: load", n), Rows: n, Size: n,
		Run: func(ctx context.Context) error {
			h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{})
			if err == nil && len(h) != n {
				err = fmt.Errorf("loaded %d of %d", len(h), n)
			}
			return err
		}}
	co := convert.Options{SystemPrompt: "You are a weather bot."}
	pai := Workload{Name: fmt.Sprintf("agent session %d: load as pydantic-ai", n), Rows: n, Size: n,
		Run: func(ctx context.Context) error {
			_, err := convert.WriteStream(io.Discard, co, func(fn func(m models.HistoryMessage) error) error {
				return e.Store.LoadEach(ctx, key, sessionstore.LoadOptions{Sources: true}, fn)
			})
			return err
		}}
	return []Workload{plain, pai}, nil
}

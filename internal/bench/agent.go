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

// AgentShape says what an agent session holds: Turns turns, a tool call in
// every CallEvery-th of them (the call, its return and the final answer:
// 4 rows; a turn without one is 2: the prompt and the answer), answers of
// MinAnswer to MaxAnswer characters, and a system prompt in the first
// request when System is set.
type AgentShape struct {
	Turns, CallEvery     int
	MinAnswer, MaxAnswer int
	System               string
}

var (
	// RealAgent is shaped like a real agent's session (issue 57): a system
	// prompt, a tool call in a quarter of the turns, answers of 1,000 to
	// 3,000 characters; 201 rows.
	RealAgent = AgentShape{Turns: 80, CallEvery: 4, MinAnswer: 1000, MaxAnswer: 3000,
		System: "You are a travel assistant. Answer with the forecast, what to pack and what to do; call the weather tool when the user names a place and dates. Keep answers practical and say when a forecast is uncertain."}
	// LightAgent is the lighter session remstore bench measured first
	// (issue 45): a call in every turn, no system prompt, fewer long
	// answers; 200 rows.
	LightAgent = AgentShape{Turns: 50, CallEvery: 1, MinAnswer: 1000, MaxAnswer: 3000}
)

// AgentSession is an agent conversation of shape s as pydantic-ai 2.x
// writes it (the shape of fixtures/pydantic-ai/2-tools.json).
func AgentSession(s AgentShape) []byte {
	var msgs []any
	at := time.Date(2026, 11, 24, 5, 48, 0, 0, time.UTC)
	ts := func() string { at = at.Add(1500 * time.Millisecond); return at.Format("2006-01-02T15:04:05.000000Z") }
	usage := map[string]any{"input_tokens": 812, "cache_write_tokens": 0, "cache_read_tokens": 0, "output_tokens": 96,
		"input_audio_tokens": 0, "cache_audio_read_tokens": 0, "output_audio_tokens": 0, "details": map[string]any{}}
	response := func(id, reason string, parts ...any) map[string]any {
		return map[string]any{"kind": "response", "model_name": "gpt-4o-2024-08-06", "provider_name": "openai", "timestamp": ts(), "usage": usage,
			"provider_response_id": "chatcmpl-" + id, "finish_reason": reason, "parts": parts}
	}
	for i := range s.Turns {
		city := []string{"Paris", "Rome", "Lisbon", "Oslo", "Cairo"}[i%5]
		id := fmt.Sprintf("call_%04d", i)
		prompt := []any{map[string]any{"part_kind": "user-prompt", "content": fmt.Sprintf("What is the weather in %s this week, and what should I pack? (turn %d)", city, i), "timestamp": ts()}}
		if i == 0 && s.System != "" {
			prompt = append([]any{map[string]any{"part_kind": "system-prompt", "content": s.System, "timestamp": ts(), "dynamic_ref": nil}}, prompt...)
		}
		msgs = append(msgs, map[string]any{"kind": "request", "timestamp": ts(), "instructions": nil, "metadata": nil, "parts": prompt})
		if s.CallEvery > 0 && i%s.CallEvery == 0 {
			msgs = append(msgs,
				response(id, "tool_call", map[string]any{"part_kind": "text", "content": "Let me look up the forecast for " + city + "."},
					map[string]any{"part_kind": "tool-call", "tool_name": "weather", "args": map[string]any{"city": city, "days": 7}, "tool_call_id": id}),
				map[string]any{"kind": "request", "timestamp": ts(), "instructions": nil, "metadata": nil, "parts": []any{
					map[string]any{"part_kind": "tool-return", "tool_name": "weather", "tool_call_id": id, "timestamp": ts(), "metadata": nil,
						"content": map[string]any{"city": city, "days": []any{
							map[string]any{"day": 1, "celsius": 18, "sky": "cloudy"}, map[string]any{"day": 2, "celsius": 21, "sky": "sunny"},
							map[string]any{"day": 3, "celsius": 16, "sky": "rain"}}}}}})
		}
		msgs = append(msgs, response(id+"-2", "stop", map[string]any{"part_kind": "text", "content": answer(i, s.MinAnswer, s.MaxAnswer)}))
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		panic(err) // maps of strings and numbers
	}
	return b
}

// answer is turn i's answer: from lo to hi characters, spread over the
// range, sentences that vary.
func answer(i, lo, hi int) string {
	n := lo + (i*7919)%(hi-lo+1)
	var b strings.Builder
	for k := 0; b.Len() < n; k++ {
		fmt.Fprintf(&b, "Day %d: %s with %s, around %d degrees; %s. ", k+1,
			[]string{"mild", "warm", "cool", "bright", "grey"}[(i+k)%5], []string{"scattered clouds", "light winds from the west", "a chance of rain in the late afternoon", "clear skies", "morning fog"}[(i*3+k)%5],
			12+(i+k)%15, []string{"bring a light jacket", "pack an umbrella", "comfortable shoes for walking", "sunscreen for the afternoon", "a sweater for the evening"}[(i+2*k)%5])
	}
	return b.String()[:n]
}

// AgentWorkloads store the real-shaped agent session and the lighter one
// as pydantic-ai messages and load each as plain history and as
// pydantic-ai JSON, side by side (issue 57: the second within 1.5x of the
// first), and, where sdkTurn is set, the real-shaped one again as a Go
// SDK's turn sends it.
func (e *Env) AgentWorkloads(ctx context.Context, _ Sizes) ([]Workload, error) {
	var out []Workload
	for _, c := range []struct {
		prefix string
		shape  AgentShape
	}{{"agent session", RealAgent}, {"light agent session", LightAgent}} {
		ws, err := e.agentPair(ctx, c.prefix, c.shape)
		if err != nil {
			return nil, err
		}
		out = append(out, ws...)
	}
	if sdkTurn == nil {
		return out, nil
	}
	sdk, err := sdkTurn(ctx, e, RealAgent)
	if err != nil {
		return nil, err
	}
	return append(out, sdk...), nil
}

// sdkTurn makes the Go SDK turn's workloads (sdkturn.go): set only in a
// build with the sdkbench tag (make bench, make bench-peer), since
// openai-go, which they marshal, makes remstore's binary 60% larger
// (49 to 78 MB).
var sdkTurn func(ctx context.Context, e *Env, s AgentShape) ([]Workload, error)

// agentPair stores an agent session of shape s through the pydantic-ai
// path and returns its two loads.
func (e *Env) agentPair(ctx context.Context, prefix string, s AgentShape) ([]Workload, error) {
	in, err := convert.DecodePydanticAI(bytes.NewReader(AgentSession(s)))
	if err != nil {
		return nil, err
	}
	n := len(in.Messages)
	key := fmt.Sprintf("%s-%d", strings.ReplaceAll(prefix, " ", "-"), n)
	if _, err := e.Store.Store(ctx, key, in.Messages, sessionstore.StoreOptions{Decoded: true}); err != nil {
		return nil, err
	}
	plain := Workload{Name: fmt.Sprintf("%s %d: load", prefix, n), Rows: n, Size: n,
		Run: func(ctx context.Context) error {
			h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{})
			if err == nil && len(h) != n {
				err = fmt.Errorf("loaded %d of %d", len(h), n)
			}
			return err
		}}
	co := convert.Options{SystemPrompt: "You are a weather bot."}
	// Its floor is the plain load, so that the two take turns sample by
	// sample: measured apart, minutes apart, their ratio moved by 2x from
	// run to run on a busy machine.
	pai := Workload{Name: fmt.Sprintf("%s %d: load as pydantic-ai", prefix, n), Rows: n, Size: n,
		Run: func(ctx context.Context) error {
			_, err := convert.WriteStream(io.Discard, co, func(fn func(m models.HistoryMessage) error) error {
				return e.Store.LoadEach(ctx, key, sessionstore.LoadOptions{Sources: true}, fn)
			})
			return err
		},
		Floor: plain.Run, FloorDef: "remstore's plain load of the same session (the history, compressed)"}
	return []Workload{plain, pai}, nil
}

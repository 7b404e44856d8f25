//go:build sdkbench

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/openai/openai-go/v3"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remopenai"
	"github.com/remstore/remstore/sessionstore"
)

func init() { sdkTurn = sdkTurnWorkloads }

// sdkTurnWorkloads are what a Go agent on openai-go pays for its history each model
// call: sdk.Library's load (extras, the last row named), remopenai.Messages
// and the request's json.Marshal, of an agent session of shape s stored
// as the SDK path stores it (typed tool calls, usage and model). Its floor
// is the json.Marshal of the same request kept in memory: what an agent
// that holds its history in memory pays anyway (issue 57: within 1.5x).
func sdkTurnWorkloads(ctx context.Context, e *Env, s AgentShape) ([]Workload, error) {
	in, err := convert.DecodePydanticAI(bytes.NewReader(AgentSession(s)))
	if err != nil {
		return nil, err
	}
	var h []models.HistoryMessage
	for _, m := range in.Messages {
		if m.Role == models.RoleSystem {
			continue // the SDK sends its system prompt with each request
		}
		var extra []models.Field
		for _, f := range m.Extra {
			if f.Key != convert.SourceKey {
				extra = append(extra, f)
			}
		}
		if m.Role == models.RoleAssistant {
			extra = append(extra, models.Field{Key: "model", Value: json.RawMessage(`"gpt-4o-2024-08-06"`)})
		}
		m.Extra = extra
		h = append(h, m)
	}
	key := fmt.Sprintf("sdk-turn-%d", len(h))
	if _, err := e.Store.Store(ctx, key, h, sessionstore.StoreOptions{}); err != nil {
		return nil, err
	}
	prompt := "And the week after, in the same city?"
	request := func(h []models.HistoryMessage) ([]byte, error) {
		msgs, err := remopenai.Messages(h, remopenai.Options{System: s.System})
		if err != nil {
			return nil, err
		}
		return json.Marshal(openai.ChatCompletionNewParams{Model: "gpt-4o-2024-08-06", Messages: append(msgs, openai.UserMessage(prompt))})
	}
	loaded, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{Extras: true})
	if err != nil {
		return nil, err
	}
	msgs, err := remopenai.Messages(loaded, remopenai.Options{System: s.System})
	if err != nil {
		return nil, err
	}
	kept := openai.ChatCompletionNewParams{Model: "gpt-4o-2024-08-06", Messages: append(msgs, openai.UserMessage(prompt))}
	n := len(h)
	turn := Workload{Name: fmt.Sprintf("Go SDK turn, %d rows", n), Rows: n, Size: n,
		FloorDef: "json.Marshal of the same openai-go request kept in memory",
		Run: func(ctx context.Context) error {
			var last string
			h, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{Extras: true, OnLast: func(v string) { last = v }})
			if err != nil {
				return err
			}
			b, err := request(h)
			if err == nil && (len(b) < 1000 || last == "") {
				err = fmt.Errorf("a request of %d bytes, last %q", len(b), last)
			}
			return err
		},
		Floor: func(context.Context) error { _, err := json.Marshal(kept); return err }}
	// The turn's load alone beside the rows it reads, in native pgx: where
	// the turn's time beyond the marshal goes.
	load := Workload{Name: fmt.Sprintf("Go SDK turn, %d rows: the load", n), Rows: n, Size: n,
		Run: func(ctx context.Context) error {
			_, err := e.Store.Load(ctx, key, sessionstore.LoadOptions{Extras: true, OnLast: func(string) {}})
			return err
		}}
	if e.Conn != nil {
		sid, _ := e.Store.SessionUUID(key)
		load.FloorDef = "native pgx: one SELECT of the columns an extras load prints, raw bytes kept (no history built)"
		load.Floor = func(ctx context.Context) error { return floorExtrasLoad(ctx, e.Conn, sid, n) }
	}
	return []Workload{turn, load}, nil
}

// floorExtrasLoad is floorLoad for a load with extras: the columns it
// prints beside the plain ones (the typed calls, usage, model, the trace)
// too.
func floorExtrasLoad(ctx context.Context, c *pgx.Conn, sid uuid.UUID, want int) error {
	return floorRows(ctx, c, sid, want, `,
		tool_calls->'items', metadata->'usage', metadata->>'model', trace_id, span_id`)
}

package sdk_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/tmc/langchaingo/llms"
	"google.golang.org/genai"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remanthropic"
	"github.com/remstore/remstore/sdk/remgenai"
	"github.com/remstore/remstore/sdk/remlangchain"
	"github.com/remstore/remstore/sdk/remopenai"
)

// agentHistory is n messages of an agent session as a load with extras
// gives it: prompts, answers that make tool calls (typed), results, and
// long answers cut to their REM LOOKUP hint.
func agentHistory(n int) []models.HistoryMessage {
	ts := "2024-01-15T10:30:00.123456+00:00"
	cut := strings.Repeat("a", 200) + "\n\n... [Message truncated - REM LOOKUP session-0b7e2a7c-52a8-4cfb-8f0b-7b2d5e9c1a11-msg-3 to recover full content] ...\n\n" + strings.Repeat("z", 200)
	var out []models.HistoryMessage
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprint("call_", i)
		out = append(out,
			models.HistoryMessage{Role: "user", Content: fmt.Sprintf("question %d about the trip", i), Timestamp: &ts},
			models.HistoryMessage{Role: "assistant", Content: "Let me look.", Timestamp: &ts,
				ToolCalls: []models.ToolCall{{ID: id, Name: "search", Arguments: `{"q":"trip","limit":5}`}}},
			models.HistoryMessage{Role: "tool", Content: `{"status":"success","results":[1,2,3],"note":"` + strings.Repeat("r", 300) + `"}`,
				ToolCallID: id, ToolName: "search", ToolArguments: []byte(`{"q":"trip","limit":5}`), Timestamp: &ts},
			models.HistoryMessage{Role: "assistant", Content: cut, Compressed: true, OriginalLength: 1200, Timestamp: &ts})
	}
	return out[:n]
}

// BenchmarkConvert1k is the conversion of a 1,000-message agent history
// into each SDK's request (messages built and encoded as the SDK sends
// them) beside the pydantic-ai JSON, in one run: the ratios are the figures.
func BenchmarkConvert1k(b *testing.B) {
	h := agentHistory(1000)
	run := func(name string, fn func() ([]byte, error)) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				out, err := fn()
				if err != nil {
					b.Fatal(err)
				}
				size = len(out)
			}
			b.ReportMetric(float64(size), "bytes/op-out")
		})
	}
	run("pydantic-ai", func() ([]byte, error) { return convert.JSON(h, convert.Options{SystemPrompt: "S"}) })
	run("openai-chat", func() ([]byte, error) {
		msgs, err := remopenai.Messages(h, remopenai.Options{System: "S"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(openai.ChatCompletionNewParams{Model: "m", Messages: msgs})
	})
	run("openai-responses", func() ([]byte, error) {
		items, err := remopenai.InputItems(h, remopenai.Options{System: "S"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(items)
	})
	run("anthropic", func() ([]byte, error) {
		sys, msgs, err := remanthropic.Messages(h, remanthropic.Options{System: "S"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(anthropic.MessageNewParams{Model: "m", MaxTokens: 1, System: sys, Messages: msgs})
	})
	run("genai", func() ([]byte, error) {
		sys, contents, err := remgenai.Contents(h, remgenai.Options{System: "S"})
		if err != nil {
			return nil, err
		}
		return json.Marshal(struct {
			System   *genai.Content   `json:"systemInstruction"`
			Contents []*genai.Content `json:"contents"`
		}{sys, contents})
	})
	run("langchaingo", func() ([]byte, error) {
		msgs, err := remlangchain.MessageContents(h, remlangchain.Options{System: "S"})
		if err != nil {
			return nil, err
		}
		n := 0
		for _, m := range msgs { // langchaingo's providers encode; count what they would carry
			for _, p := range m.Parts {
				if t, ok := p.(llms.TextContent); ok {
					n += len(t.Text)
				}
			}
		}
		return make([]byte, n), nil
	})
}

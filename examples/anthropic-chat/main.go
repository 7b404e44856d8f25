// Command anthropic-chat is a Go agent on anthropic-sdk-go whose conversation
// lives in remstore, with extended thinking on: each prompt is one turn (load,
// call Claude with get_weather and rem_lookup, store the answer with its
// thinking blocks and the tool results), until Claude answers without a tool.
//
//	ANTHROPIC_API_KEY=... go run ./examples/anthropic-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remanthropic"
)

func main() {
	f := storeflag.Register()
	model := flag.String("model", string(anthropic.ModelClaudeSonnet5_5), "the model")
	flag.Parse()
	ctx := context.Background()
	st, err := f.Open(ctx)
	if err != nil {
		fail(err)
	}
	llm := anthropic.NewClient() // ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
		Description: anthropic.String("The weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: storeflag.WeatherSchema["properties"], Required: []string{"city"}}}},
		remanthropic.LookupTool()}
	for _, prompt := range flag.Args() {
		if err := st.Append(ctx, *f.Session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
			fail(err)
		}
		for round := 0; ; round++ {
			if round == 8 {
				fail(fmt.Errorf("no answer after 8 tool rounds"))
			}
			history, err := st.Load(ctx, *f.Session)
			if err != nil {
				fail(err)
			}
			system, msgs, err := remanthropic.Messages(history, remanthropic.Options{System: *f.System})
			if err != nil {
				fail(err)
			}
			resp, err := llm.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(*model), MaxTokens: 4096,
				Thinking: anthropic.ThinkingConfigParamOfEnabled(2048), System: system, Messages: msgs, Tools: tools})
			if err != nil {
				fail(err)
			}
			answer, err := remanthropic.FromMessage(resp)
			if err != nil {
				fail(err)
			}
			turn := []models.HistoryMessage{answer}
			for _, c := range answer.ToolCalls {
				m, ok, err := sdk.HandleLookup(ctx, st, c)
				if err != nil {
					fail(err)
				}
				if !ok {
					m = sdk.ToolResult(c, storeflag.Weather(c.Arguments))
				}
				turn = append(turn, m)
			}
			if err := st.Append(ctx, *f.Session, turn); err != nil {
				fail(err)
			}
			if len(answer.ToolCalls) == 0 {
				fmt.Println(answer.Content)
				break
			}
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "anthropic-chat:", err)
	os.Exit(1)
}

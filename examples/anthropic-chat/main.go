// Command anthropic-chat is a Go agent on anthropic-sdk-go whose conversation
// lives in remstore, with extended thinking on: each prompt is one turn
// (sdk.RunTurn: load, call Claude with get_weather and rem_lookup, store the
// answer with its thinking blocks and the tool results), until Claude answers
// without a tool.
//
//	ANTHROPIC_API_KEY=... go run ./examples/anthropic-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/remstore/remstore/examples/internal/storeflag"
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
		storeflag.Fail("anthropic-chat", err)
	}
	// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL; each call recorded as sent
	// through sdk.Transport when DEBUG_AUDIT_SESSION is set.
	llm := anthropic.NewClient(option.WithHTTPClient(&http.Client{Transport: sdk.Transport(nil)}))
	tools := []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{Name: "get_weather",
		Description: anthropic.String("The weather in a city"),
		InputSchema: anthropic.ToolInputSchemaParam{Properties: storeflag.WeatherSchema["properties"], Required: []string{"city"}}}},
		remanthropic.LookupTool()}
	ask := remanthropic.Ask(&llm, anthropic.MessageNewParams{Model: anthropic.Model(*model), MaxTokens: 4096,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(2048), Tools: tools}, remanthropic.Options{System: *f.System})
	for _, prompt := range flag.Args() {
		answer, err := sdk.RunTurn(ctx, st, *f.Session, prompt, ask, storeflag.WeatherTool)
		if err != nil {
			storeflag.Fail("anthropic-chat", err)
		}
		fmt.Println(answer.Content)
	}
}

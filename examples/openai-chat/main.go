// Command openai-chat is a Go agent on openai-go whose conversation lives in
// remstore: each prompt is one turn (sdk.RunTurn: load the session, call the
// model with get_weather and rem_lookup, store the answer with its tool
// results), until the model answers without calling a tool.
//
//	OPENAI_API_KEY=... go run ./examples/openai-chat -session trip-1 "Weather in Lisbon?"
//	go run ./examples/openai-chat -serve http://127.0.0.1:8088 -api-key KEY -session trip-1 "And tomorrow?"
//	go run ./examples/openai-chat -stream -session trip-1 "And the day after?"
//
// Without -serve it opens the library on -db (default: the embedded SQLite
// file). The model is OpenAI's, or whatever OPENAI_BASE_URL names.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remopenai"
)

func main() {
	f := storeflag.Register()
	model := flag.String("model", "gpt-4o-mini", "the model")
	stream := flag.Bool("stream", false, "stream each answer as it comes")
	flag.Parse()
	ctx := context.Background()
	st, err := f.Open(ctx)
	if err != nil {
		storeflag.Fail("openai-chat", err)
	}
	// OPENAI_API_KEY, OPENAI_BASE_URL. Through sdk.Transport, each model
	// call's request and response go into the audit dump as sent and
	// received, when DEBUG_AUDIT_SESSION is set.
	llm := openai.NewClient(option.WithHTTPClient(&http.Client{Transport: sdk.Transport(nil)}))
	tools := []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
			Description: openai.String("The weather in a city"), Parameters: storeflag.WeatherSchema}),
		remopenai.LookupTool(),
	}
	params := openai.ChatCompletionNewParams{Model: *model, Tools: tools}
	opts := remopenai.Options{System: *f.System}
	ask := remopenai.Ask(&llm, params, opts)
	if *stream { // the answer printed as it comes, stored as a whole
		ask = remopenai.AskStream(&llm, params, opts, func(c openai.ChatCompletionChunk) {
			if len(c.Choices) > 0 {
				fmt.Print(c.Choices[0].Delta.Content)
			}
		})
	}
	for _, prompt := range flag.Args() {
		answer, err := sdk.RunTurn(ctx, st, *f.Session, prompt, ask, storeflag.WeatherTool)
		if err != nil {
			storeflag.Fail("openai-chat", err)
		}
		if *stream {
			fmt.Println()
			continue
		}
		fmt.Println(answer.Content)
	}
}

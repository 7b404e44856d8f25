// Command langchain-chat is a Go agent on langchaingo (its OpenAI provider)
// whose conversation lives in remstore: each prompt is one turn (sdk.RunTurn)
// of GenerateContent calls with get_weather and rem_lookup, the history
// loaded as []llms.MessageContent before each call.
//
//	OPENAI_API_KEY=... go run ./examples/langchain-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remlangchain"
)

func main() {
	f := storeflag.Register()
	model := flag.String("model", "gpt-4o-mini", "the model")
	flag.Parse()
	ctx := context.Background()
	st, err := f.Open(ctx)
	if err != nil {
		storeflag.Fail("langchain-chat", err)
	}
	llm, err := openai.New(openai.WithModel(*model)) // OPENAI_API_KEY, OPENAI_BASE_URL
	if err != nil {
		storeflag.Fail("langchain-chat", err)
	}
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "get_weather",
		Description: "The weather in a city", Parameters: storeflag.WeatherSchema}}, remlangchain.LookupTool()}
	ask := remlangchain.Ask(llm, remlangchain.Options{System: *f.System}, llms.WithTools(tools))
	for _, prompt := range flag.Args() {
		answer, err := sdk.RunTurn(ctx, st, *f.Session, prompt, ask, storeflag.WeatherTool)
		if err != nil {
			storeflag.Fail("langchain-chat", err)
		}
		fmt.Println(answer.Content)
	}
}

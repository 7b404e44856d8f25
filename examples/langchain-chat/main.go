// Command langchain-chat is a Go agent on langchaingo (its OpenAI provider)
// whose conversation lives in remstore: each prompt is one turn of
// GenerateContent calls with get_weather and rem_lookup, the history loaded
// as []llms.MessageContent before each call and each answer stored with its
// tool results.
//
//	OPENAI_API_KEY=... go run ./examples/langchain-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/models"
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
		fail(err)
	}
	llm, err := openai.New(openai.WithModel(*model)) // OPENAI_API_KEY, OPENAI_BASE_URL
	if err != nil {
		fail(err)
	}
	tools := []llms.Tool{{Type: "function", Function: &llms.FunctionDefinition{Name: "get_weather",
		Description: "The weather in a city", Parameters: storeflag.WeatherSchema}}, remlangchain.LookupTool()}
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
			msgs, err := remlangchain.MessageContents(history, remlangchain.Options{System: *f.System})
			if err != nil {
				fail(err)
			}
			resp, err := llm.GenerateContent(ctx, msgs, llms.WithTools(tools))
			if err != nil {
				fail(err)
			}
			answer, err := remlangchain.FromChoice(resp.Choices[0])
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
	fmt.Fprintln(os.Stderr, "langchain-chat:", err)
	os.Exit(1)
}

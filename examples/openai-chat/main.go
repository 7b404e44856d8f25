// Command openai-chat is a Go agent on openai-go whose conversation lives in
// remstore: each prompt is one turn (load the session, call the model with two
// tools, store what it said and what the tools returned), until the model
// answers without calling a tool.
//
//	OPENAI_API_KEY=... go run ./examples/openai-chat -session trip-1 "Weather in Lisbon?"
//	go run ./examples/openai-chat -serve http://127.0.0.1:8088 -api-key KEY -session trip-1 "And tomorrow?"
//
// Without -serve it opens the library on -db (default: the embedded SQLite
// file). The model is OpenAI's, or whatever OPENAI_BASE_URL names.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remopenai"
)

func main() {
	f := storeflag.Register()
	model := flag.String("model", "gpt-4o-mini", "the model")
	flag.Parse()
	ctx := context.Background()
	st, err := f.Open(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "openai-chat:", err)
		os.Exit(1)
	}
	llm := openai.NewClient() // OPENAI_API_KEY, OPENAI_BASE_URL
	for _, prompt := range flag.Args() {
		answer, err := turn(ctx, llm, st, *f.Session, *model, *f.System, prompt)
		if err != nil {
			fmt.Fprintln(os.Stderr, "openai-chat:", err)
			os.Exit(1)
		}
		fmt.Println(answer)
	}
}

var tools = []openai.ChatCompletionToolUnionParam{
	openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
		Description: openai.String("The weather in a city"),
		Parameters:  shared.FunctionParameters(storeflag.WeatherSchema)}),
	remopenai.LookupTool(),
}

// turn is one prompt: the user's message stored, then model calls until
// the model answers without a tool call, each answer and its tool results
// stored as one turn.
func turn(ctx context.Context, llm openai.Client, st sdk.Store, session, model, system, prompt string) (string, error) {
	if err := st.Append(ctx, session, []models.HistoryMessage{{Role: models.RoleUser, Content: prompt}}); err != nil {
		return "", err
	}
	for range 8 { // a bound on tool rounds per prompt
		history, err := st.Load(ctx, session)
		if err != nil {
			return "", err
		}
		msgs, err := remopenai.Messages(history, remopenai.Options{System: system})
		if err != nil {
			return "", err
		}
		resp, err := llm.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model, Messages: msgs, Tools: tools})
		if err != nil {
			return "", err
		}
		answer, err := remopenai.FromCompletion(resp)
		if err != nil {
			return "", err
		}
		results := []models.HistoryMessage{answer}
		for _, c := range answer.ToolCalls {
			m, ok, err := sdk.HandleLookup(ctx, st, c)
			if err != nil {
				return "", err
			}
			if !ok {
				m = sdk.ToolResult(c, storeflag.Weather(c.Arguments))
			}
			results = append(results, m)
		}
		if err := st.Append(ctx, session, results); err != nil {
			return "", err
		}
		if len(answer.ToolCalls) == 0 {
			return answer.Content, nil
		}
	}
	return "", fmt.Errorf("no answer after 8 tool rounds")
}

// Command genai-chat is a Go agent on google.golang.org/genai whose
// conversation lives in remstore, thoughts included: each prompt is one turn
// (load, call Gemini with get_weather and rem_lookup, store the answer with its
// thought signatures and the function responses), until Gemini answers
// without a call.
//
//	GOOGLE_API_KEY=... go run ./examples/genai-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"google.golang.org/genai"

	"github.com/remstore/remstore/examples/internal/storeflag"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remgenai"
)

func main() {
	f := storeflag.Register()
	model := flag.String("model", "gemini-2.5-flash", "the model")
	flag.Parse()
	ctx := context.Background()
	st, err := f.Open(ctx)
	if err != nil {
		fail(err)
	}
	llm, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI}) // GOOGLE_API_KEY
	if err != nil {
		fail(err)
	}
	decls := []*genai.FunctionDeclaration{{Name: "get_weather", Description: "The weather in a city",
		ParametersJsonSchema: storeflag.WeatherSchema}, remgenai.LookupDeclaration()}
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
			system, contents, err := remgenai.Contents(history, remgenai.Options{System: *f.System})
			if err != nil {
				fail(err)
			}
			resp, err := llm.Models.GenerateContent(ctx, *model, contents, &genai.GenerateContentConfig{SystemInstruction: system,
				ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true}, Tools: []*genai.Tool{{FunctionDeclarations: decls}}})
			if err != nil {
				fail(err)
			}
			answer, err := remgenai.FromResponse(resp)
			if err != nil {
				fail(err)
			}
			turn := []models.HistoryMessage{answer}
			for _, c := range answer.ToolCalls {
				out := storeflag.Weather(c.Arguments)
				if c.Name == sdk.LookupToolName {
					if out, err = sdk.RunLookup(ctx, st, c.Arguments); err != nil {
						fail(err)
					}
				}
				m, err := remgenai.ToolResult(c, map[string]any{"output": out})
				if err != nil {
					fail(err)
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
	fmt.Fprintln(os.Stderr, "genai-chat:", err)
	os.Exit(1)
}

// Command genai-chat is a Go agent on google.golang.org/genai whose
// conversation lives in remstore, thoughts included: each prompt is one turn
// (sdk.RunTurn: load, call Gemini with get_weather and rem_lookup, store the
// answer with its thought signatures and the function responses), until
// Gemini answers without a call.
//
//	GOOGLE_API_KEY=... go run ./examples/genai-chat -session trip-1 "Weather in Lisbon?"
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"

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
		storeflag.Fail("genai-chat", err)
	}
	// GOOGLE_API_KEY; each call recorded as sent through sdk.Transport when
	// DEBUG_AUDIT_SESSION is set.
	llm, err := genai.NewClient(ctx, &genai.ClientConfig{Backend: genai.BackendGeminiAPI, HTTPClient: &http.Client{Transport: sdk.Transport(nil)}})
	if err != nil {
		storeflag.Fail("genai-chat", err)
	}
	decls := []*genai.FunctionDeclaration{{Name: "get_weather", Description: "The weather in a city",
		ParametersJsonSchema: storeflag.WeatherSchema}, remgenai.LookupDeclaration()}
	ask := remgenai.Ask(llm, *model, &genai.GenerateContentConfig{ThinkingConfig: &genai.ThinkingConfig{IncludeThoughts: true},
		Tools: []*genai.Tool{{FunctionDeclarations: decls}}}, remgenai.Options{System: *f.System})
	// A FunctionResponse is an object: the forecast is one already.
	tool := func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
		return remgenai.ToolResult(c, map[string]any{"output": storeflag.Weather(c.Arguments)})
	}
	for _, prompt := range flag.Args() {
		answer, err := sdk.RunTurn(ctx, st, *f.Session, prompt, ask, tool)
		if err != nil {
			storeflag.Fail("genai-chat", err)
		}
		fmt.Println(answer.Content)
	}
}

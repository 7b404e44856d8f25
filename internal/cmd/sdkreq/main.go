// Command sdkreq prints the request body that an sdk/ adapter and its model
// SDK send for a history: the Go half of the pydantic-ai oracle
// (interop/test_sdk_oracle.py), which compares it with what pydantic-ai's
// own provider model sends for the same stored conversation.
//
//	sdkreq -provider openai|anthropic|google [-system TEXT] < history.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/anthropics/anthropic-sdk-go/v2"
	aoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"google.golang.org/genai"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remanthropic"
	"github.com/remstore/remstore/sdk/remgenai"
	"github.com/remstore/remstore/sdk/remopenai"
)

// answers are minimal valid responses, so that each SDK call returns.
var answers = map[string]string{
	"openai":    `{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`,
	"anthropic": `{"id":"x","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
	"google":    `{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}]}`,
}

func main() {
	provider := flag.String("provider", "openai", "openai, anthropic or google")
	system := flag.String("system", "", "the system prompt")
	model := flag.String("model", "test-model", "the model name sent")
	flag.Parse()
	if err := run(*provider, *system, *model, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdkreq:", err)
		os.Exit(1)
	}
}

func run(provider, system, model string, in io.Reader, out io.Writer) error {
	answer, ok := answers[provider]
	if !ok {
		return fmt.Errorf("unknown provider %q", provider)
	}
	data, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	history, err := models.DecodeHistory(data)
	if err != nil {
		return err
	}
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer srv.Close()
	ctx := context.Background()
	switch provider {
	case "openai":
		msgs, err := remopenai.Messages(history, remopenai.Options{System: system})
		if err != nil {
			return err
		}
		c := openai.NewClient(ooption.WithBaseURL(srv.URL), ooption.WithAPIKey("k"), ooption.WithMaxRetries(0))
		_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: model, Messages: msgs})
		if err != nil {
			return err
		}
	case "anthropic":
		sys, msgs, err := remanthropic.Messages(history, remanthropic.Options{System: system})
		if err != nil {
			return err
		}
		c := anthropic.NewClient(aoption.WithBaseURL(srv.URL), aoption.WithAPIKey("k"), aoption.WithMaxRetries(0))
		_, err = c.Messages.New(ctx, anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 1024, System: sys, Messages: msgs})
		if err != nil {
			return err
		}
	case "google":
		sys, contents, err := remgenai.Contents(history, remgenai.Options{System: system})
		if err != nil {
			return err
		}
		c, err := genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
		if err != nil {
			return err
		}
		if _, err := c.Models.GenerateContent(ctx, model, contents, &genai.GenerateContentConfig{SystemInstruction: sys}); err != nil {
			return err
		}
	}
	// As it was sent: decoding it here would round numbers through float64.
	if !json.Valid(body) {
		return fmt.Errorf("captured body is not JSON: %.200s", body)
	}
	_, err = out.Write(append(body, '\n'))
	return err
}

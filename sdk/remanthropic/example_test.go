package remanthropic_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remanthropic"
)

// Claude's answer with thinking and a tool call, as it is stored, and the
// request that sends it back: thinking block first, signature intact.
func Example() {
	ctx := context.Background()
	fake := httptest.NewServer(fakellm.Anthropic(&fakellm.Recorder{}))
	defer fake.Close()
	llm := anthropic.NewClient(option.WithBaseURL(fake.URL), option.WithAPIKey("k"))
	history := []models.HistoryMessage{{Role: models.RoleUser, Content: "Weather in Lisbon?"}}
	system, msgs, _ := remanthropic.Messages(history, remanthropic.Options{System: "Be brief."})
	resp, _ := llm.Messages.New(ctx, anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024), System: system, Messages: msgs})
	answer, _ := remanthropic.FromMessage(resp)
	history = append(history, answer, sdk.ToolResult(answer.ToolCalls[0], "sunny"), sdk.ToolResult(answer.ToolCalls[1], "a guide"))
	_, msgs, _ = remanthropic.Messages(history, remanthropic.Options{})
	for _, b := range msgs[1].OfAssistant.Content {
		fmt.Println(*b.GetType())
	}
	// Output:
	// thinking
	// tool_use
	// tool_use
}

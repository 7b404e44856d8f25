package remopenai_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/internal/fakellm"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sdk/remopenai"
	"github.com/remstore/remstore/sessionstore"
)

// A turn on Chat Completions with the history in remstore (SQLite's
// :memory:; a fake OpenAI server stands in for the model).
func Example() {
	ctx := context.Background()
	db, _ := repository.Open(ctx, ":memory:")
	_ = migrations.Up(ctx, db)
	lib, _ := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	store := remstore.Library(lib)
	fake := httptest.NewServer(fakellm.OpenAI(&fakellm.Recorder{}))
	defer fake.Close()
	llm := openai.NewClient(option.WithBaseURL(fake.URL), option.WithAPIKey("k"))

	_, _ = store.Append(ctx, "trip", []models.HistoryMessage{{Role: models.RoleUser, Content: "Weather in Lisbon, and the guide?"}})
	historyh, _ := store.Load(ctx, "trip")
	history := historyh.Messages
	msgs, _ := remopenai.Messages(history, remopenai.Options{System: "You are a travel agent."})
	resp, _ := llm.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs})
	answer, _ := remopenai.FromCompletion(resp)
	turn := []models.HistoryMessage{answer}
	for _, c := range answer.ToolCalls {
		fmt.Println("call", c.ID, c.Name, c.Arguments)
		turn = append(turn, sdk.ToolResult(c, fakellm.RunTool(c.Name, c.Arguments)))
	}
	_, _ = store.Append(ctx, "trip", turn)
	storedh, _ := store.Load(ctx, "trip")
	stored := storedh.Messages
	fmt.Println(len(stored), "messages;", stored[2].Role, stored[2].ToolCallID)
	// Output:
	// call call_0 get_weather {"city": "Lisbon"}
	// call call_1 fetch_guide {"city": "Lisbon", "days": 3}
	// 4 messages; tool call_0
}

package remlangchain_test

import (
	"context"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sdk/remlangchain"
	"github.com/remstore/remstore/sessionstore"
)

// langchaingo's chat message history, kept in a remstore session.
func ExampleHistory() {
	ctx := context.Background()
	db, _ := repository.Open(ctx, ":memory:")
	_ = migrations.Up(ctx, db)
	lib, _ := sessionstore.New(db, sessionstore.Options{UserID: "alice"})
	h := remlangchain.NewHistory(remstore.Library(lib), "chat-1")
	_ = h.AddUserMessage(ctx, "weather?")
	_ = h.AddMessage(ctx, llms.AIChatMessage{ToolCalls: []llms.ToolCall{{ID: "c1", Type: "function",
		FunctionCall: &llms.FunctionCall{Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}}})
	_ = h.AddMessage(ctx, llms.ToolChatMessage{ID: "c1", Content: "sunny"})
	_ = h.AddAIMessage(ctx, "It is sunny.")
	msgs, _ := h.Messages(ctx)
	for _, m := range msgs {
		fmt.Printf("%s %q\n", m.GetType(), m.GetContent())
	}
	// Output:
	// human "weather?"
	// ai ""
	// tool "sunny"
	// ai "It is sunny."
}

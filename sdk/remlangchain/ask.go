package remlangchain

import (
	"context"

	"github.com/tmc/langchaingo/llms"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Ask is one GenerateContent call as an sdk.Asker: the history as
// langchaingo messages (MessageContents with o), sent with the call
// options given (llms.WithTools, ...), the first choice as FromChoice maps
// it. A turn is then
//
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, remlangchain.Ask(llm, opts, llms.WithTools(tools)), tool)
//
// With llms.WithStreamingFunc among the options the answer is streamed to
// that function, and the choice langchaingo puts together is stored: the
// same message as without streaming.
func Ask(llm llms.Model, o Options, options ...llms.CallOption) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		msgs, err := MessageContents(history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := llm.GenerateContent(ctx, msgs, options...)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		if len(resp.Choices) == 0 {
			return models.HistoryMessage{}, sdk.Errorf(-1, "choices", "the response has no choice")
		}
		return FromChoice(resp.Choices[0])
	}
}

package remanthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Ask is one Messages API call as an sdk.Asker: params as given (model,
// max tokens, tools, thinking) with the history as its system blocks and
// messages (Messages with o), the answer as FromMessage maps it. A turn is then
//
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, remanthropic.Ask(&client, params, opts), tool)
func Ask(client *anthropic.Client, params anthropic.MessageNewParams, o Options) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := request(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Messages.New(ctx, p)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return FromMessage(resp)
	}
}

// AskStream is Ask with the answer streamed: each event goes to onEvent
// (nil: nowhere) as it comes, and the message the events accumulate into
// (anthropic.Message.Accumulate) is stored as FromMessage maps it, the
// same message as Ask's.
func AskStream(client *anthropic.Client, params anthropic.MessageNewParams, o Options, onEvent func(anthropic.MessageStreamEventUnion)) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := request(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		stream := client.Messages.NewStreaming(ctx, p)
		defer stream.Close()
		var msg anthropic.Message
		for stream.Next() {
			ev := stream.Current()
			if err := msg.Accumulate(ev); err != nil {
				return models.HistoryMessage{}, err
			}
			if onEvent != nil {
				onEvent(ev)
			}
		}
		if err := stream.Err(); err != nil {
			return models.HistoryMessage{}, err
		}
		return FromMessage(&msg)
	}
}

func request(params anthropic.MessageNewParams, history []models.HistoryMessage, o Options) (anthropic.MessageNewParams, error) {
	system, msgs, err := Messages(history, o)
	if err != nil {
		return params, err
	}
	params.System, params.Messages = system, msgs
	return params, nil
}

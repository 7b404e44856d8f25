package remopenai

import (
	"context"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Ask is one Chat Completions call as an sdk.Asker: params as given (model,
// tools, settings) with the history as its messages (Messages with o), the
// answer as FromCompletion maps it. A turn is then
//
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, remopenai.Ask(&client, params, opts), tool)
func Ask(client *openai.Client, params openai.ChatCompletionNewParams, o Options) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := chatParams(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Chat.Completions.New(ctx, p)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return FromCompletion(resp)
	}
}

// AskStream is Ask with the answer streamed: the chunks go to onChunk (nil:
// nowhere) as they come, and the accumulated completion is stored as
// FromCompletion maps it, the same message as Ask's. The usage is asked for
// (stream_options.include_usage), as a completion carries it.
func AskStream(client *openai.Client, params openai.ChatCompletionNewParams, o Options, onChunk func(openai.ChatCompletionChunk)) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := chatParams(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		p.StreamOptions.IncludeUsage = openai.Bool(true)
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			chunk := stream.Current()
			acc.AddChunk(chunk)
			if onChunk != nil {
				onChunk(chunk)
			}
		}
		if err := stream.Err(); err != nil {
			return models.HistoryMessage{}, err
		}
		return FromCompletion(&acc.ChatCompletion)
	}
}

// AskResponses is one Responses API call as an sdk.Asker: params as given
// with the history as its input items (InputItems with o), the answer as
// FromResponse maps it.
func AskResponses(client *openai.Client, params responses.ResponseNewParams, o Options) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := responsesParams(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Responses.New(ctx, p)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return FromResponse(resp)
	}
}

// AskResponsesStream is AskResponses with the answer streamed: each event
// goes to onEvent (nil: nowhere) as it comes, and the response the
// response.completed event carries whole is stored as FromResponse maps it,
// the same message as AskResponses'. A stream that ends without it (failed,
// incomplete, cut) is an error and nothing is stored.
func AskResponsesStream(client *openai.Client, params responses.ResponseNewParams, o Options, onEvent func(responses.ResponseStreamEventUnion)) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		p, err := responsesParams(params, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		stream := client.Responses.NewStreaming(ctx, p)
		defer stream.Close()
		var done *responses.Response
		last := ""
		for stream.Next() {
			ev := stream.Current()
			if ev.Type == "response.completed" {
				r := ev.Response
				done = &r
			}
			last = ev.Type
			if onEvent != nil {
				onEvent(ev)
			}
		}
		if err := stream.Err(); err != nil {
			return models.HistoryMessage{}, err
		}
		if done == nil {
			return models.HistoryMessage{}, sdk.Errorf(-1, "output", "the stream ended without response.completed (last event %q)", last)
		}
		return FromResponse(done)
	}
}

// chatParams is params with the history as its messages (Messages with o),
// what Ask and AskStream send.
func chatParams(params openai.ChatCompletionNewParams, history []models.HistoryMessage, o Options) (openai.ChatCompletionNewParams, error) {
	msgs, err := Messages(history, o)
	params.Messages = msgs
	return params, err
}

// responsesParams is params with the history as its input items
// (InputItems with o), what AskResponses and AskResponsesStream send.
func responsesParams(params responses.ResponseNewParams, history []models.HistoryMessage, o Options) (responses.ResponseNewParams, error) {
	input, err := InputItems(history, o)
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
	return params, err
}

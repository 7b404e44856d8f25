package remgenai

import (
	"context"

	"google.golang.org/genai"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// Ask is one generateContent call as an sdk.Asker: model and config as
// given (tools, thinking; nil: none) with the history as its contents and
// system instruction (Contents with o), the answer as FromResponse maps it.
// A turn is then
//
//	answer, err := sdk.RunTurn(ctx, store, "chat-1", prompt, remgenai.Ask(client, "gemini-2.5-flash", config, opts), tool)
func Ask(client *genai.Client, model string, config *genai.GenerateContentConfig, o Options) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		contents, c, err := request(config, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		resp, err := client.Models.GenerateContent(ctx, model, contents, c)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		return FromResponse(resp)
	}
}

// AskStream is Ask with the answer streamed (GenerateContentStream): each
// chunk goes to onChunk (nil: nowhere) as it comes, and the chunks are
// stored as FromChunks maps them, the same message as Ask's.
func AskStream(client *genai.Client, model string, config *genai.GenerateContentConfig, o Options, onChunk func(*genai.GenerateContentResponse)) sdk.Asker {
	return func(ctx context.Context, history []models.HistoryMessage) (models.HistoryMessage, error) {
		contents, c, err := request(config, history, o)
		if err != nil {
			return models.HistoryMessage{}, err
		}
		var chunks []*genai.GenerateContentResponse
		for chunk, err := range client.Models.GenerateContentStream(ctx, model, contents, c) {
			if err != nil {
				return models.HistoryMessage{}, err
			}
			chunks = append(chunks, chunk)
			if onChunk != nil {
				onChunk(chunk)
			}
		}
		return FromChunks(chunks)
	}
}

// request is the contents and a copy of config with the system instruction.
func request(config *genai.GenerateContentConfig, history []models.HistoryMessage, o Options) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	system, contents, err := Contents(history, o)
	if err != nil {
		return nil, nil, err
	}
	c := &genai.GenerateContentConfig{}
	if config != nil {
		cp := *config
		c = &cp
	}
	if system != nil {
		c.SystemInstruction = system
	}
	return contents, c, nil
}

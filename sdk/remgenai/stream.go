package remgenai

import (
	"google.golang.org/genai"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
)

// FromChunks is the assistant message to store for a streamed answer
// (GenerateContentStream's chunks, in order): the first candidate's parts
// of every chunk, a run of text parts (or of thought parts) joined into
// one part as the unstreamed answer has it, its signature the run's;
// usage and model from the last chunk that says them. It maps what
// FromResponse maps, to the same message.
func FromChunks(chunks []*genai.GenerateContentResponse) (models.HistoryMessage, error) {
	merged := &genai.GenerateContentResponse{}
	var parts []*genai.Part
	content := false
	for _, c := range chunks {
		if c == nil {
			continue
		}
		if c.UsageMetadata != nil {
			merged.UsageMetadata = c.UsageMetadata
		}
		if c.ModelVersion != "" {
			merged.ModelVersion = c.ModelVersion
		}
		if len(c.Candidates) == 0 || c.Candidates[0].Content == nil {
			continue
		}
		content = true
		for _, p := range c.Candidates[0].Content.Parts {
			parts = appendMerged(parts, p)
		}
	}
	if !content {
		return models.HistoryMessage{}, sdk.Errorf(-1, "candidates", "the stream has no candidate content")
	}
	merged.Candidates = []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: parts}}}
	return FromResponse(merged)
}

// appendMerged appends p, joining it to the last part when both are text
// of one kind (thought or not) and nothing else.
func appendMerged(parts []*genai.Part, p *genai.Part) []*genai.Part {
	if p == nil {
		return append(parts, p) // FromResponse names it
	}
	if n := len(parts); n > 0 && textOnly(parts[n-1]) && textOnly(p) && parts[n-1].Thought == p.Thought {
		last := *parts[n-1]
		last.Text += p.Text
		if len(p.ThoughtSignature) > 0 {
			last.ThoughtSignature = p.ThoughtSignature
		}
		parts[n-1] = &last
		return parts
	}
	cp := *p
	return append(parts, &cp)
}

func textOnly(p *genai.Part) bool {
	return p != nil && p.FunctionCall == nil && p.FunctionResponse == nil && p.InlineData == nil && p.FileData == nil &&
		p.ExecutableCode == nil && p.CodeExecutionResult == nil
}

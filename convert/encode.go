package convert

import (
	"strconv"

	"github.com/remstore/remstore/models"
)

// appendJSON writes msgs exactly as encoding/json (HTML escaping off) would
// write []Message, without reflection and without re-validating the raw
// parts, which are compact JSON already. A test checks it byte for byte
// against encoding/json.
func appendJSON(b []byte, msgs []Message) []byte {
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, m)
	}
	return append(b, ']', '\n')
}

// appendMessage writes one message as encoding/json would.
func appendMessage(b []byte, m Message) []byte {
	if m.Raw != nil {
		return append(b, m.Raw...)
	}
	{
		b = append(b, `{"parts":[`...)
		for j, p := range m.Parts {
			if j > 0 {
				b = append(b, ',')
			}
			b = appendPart(b, p)
		}
		b = append(b, ']')
		if m.Usage != nil {
			b = append(b, `,"usage":{"input_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.InputTokens), 10)
			b = append(b, `,"cache_write_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.CacheWriteTokens), 10)
			b = append(b, `,"cache_read_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.CacheReadTokens), 10)
			b = append(b, `,"output_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.OutputTokens), 10)
			b = append(b, `,"input_audio_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.InputAudioTokens), 10)
			b = append(b, `,"cache_audio_read_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.CacheAudioReadTokens), 10)
			b = append(b, `,"output_audio_tokens":`...)
			b = strconv.AppendInt(b, int64(m.Usage.OutputAudioTokens), 10)
			b = append(b, `,"details":{}}`...)
		}
		if m.ModelName != "" {
			b = append(b, `,"model_name":`...)
			b = appendString(b, m.ModelName)
		}
		if m.Timestamp != "" {
			b = append(b, `,"timestamp":`...)
			b = appendString(b, m.Timestamp)
		}
		b = append(b, `,"kind":`...)
		b = appendString(b, m.Kind)
		b = append(b, '}')
	}
	return b
}

func appendPart(b []byte, p Part) []byte {
	b = append(b, '{')
	comma := false
	field := func(name string) {
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	if p.ToolName != "" {
		field("tool_name")
		b = appendString(b, p.ToolName)
	}
	if len(p.Content) > 0 {
		field("content")
		b = append(b, p.Content...)
	}
	if len(p.Args) > 0 {
		field("args")
		b = append(b, p.Args...)
	}
	if p.ToolCallID != "" {
		field("tool_call_id")
		b = appendString(b, p.ToolCallID)
	}
	if p.Timestamp != "" {
		field("timestamp")
		b = appendString(b, p.Timestamp)
	}
	field("part_kind")
	b = appendString(b, p.PartKind)
	return append(b, '}')
}

// appendString is encoding/json's string encoding with HTML escaping off,
// written once for the history and the pydantic-ai JSON alike.
func appendString(b []byte, s string) []byte { return models.AppendJSONString(b, s) }

package convert

import (
	"strconv"
	"unicode/utf8"
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

const hexDigits = "0123456789abcdef"

// appendString is encoding/json's string encoding with HTML escaping off:
// ", \ and control characters escaped (\b \f \n \r \t by name), invalid UTF-8
// as U+FFFD, and U+2028, U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

package compressor

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/remstore/remstore/models"
)

// DefaultTruncateLength is T when none is given; MaxTruncateLength bounds it
// so that 2T can never overflow and a typo cannot disable compression.
const (
	DefaultTruncateLength = 200
	MaxTruncateLength     = 1_000_000
)

// Errors returned by this package.
var (
	ErrInvalidUTF8       = errors.New("content is not valid UTF-8")
	ErrBadTruncateLength = errors.New("truncate length must be between 1 and 1000000")
)

// Compressor cuts messages longer than 2T code points.
type Compressor struct{ t int }

// New returns a compressor with truncate length t (1 to MaxTruncateLength).
func New(t int) (*Compressor, error) {
	if t < 1 || t > MaxTruncateLength {
		return nil, fmt.Errorf("%w, got %d", ErrBadTruncateLength, t)
	}
	return &Compressor{t: t}, nil
}

// Default is a compressor with T = 200.
var Default = &Compressor{t: DefaultTruncateLength}

// TruncateLength returns T.
func (c *Compressor) TruncateLength() int { return c.t }

// Compressible reports whether Compress would cut m: its content is longer
// than 2T code points and its role is not system. It does not look at other
// roles; ShouldCompressOnLoad adds the load-time rule.
func (c *Compressor) Compressible(m models.HistoryMessage) bool {
	return m.Role != models.RoleSystem && utf8.RuneCountInString(m.Content) > 2*c.t
}

// ShouldCompressOnLoad is the load-time rule of the contract with the Python service: only messages whose
// role is exactly assistant (or empty, which reads as assistant) and that are
// longer than 2T are cut. model is left whole, as the Python service leaves it; user,
// tool and system messages never are cut.
func (c *Compressor) ShouldCompressOnLoad(m models.HistoryMessage) bool {
	return (m.Role == models.RoleAssistant || m.Role == "") && c.Compressible(m)
}

// Compress returns m with its content cut to the first and last T code points
// around a hint, and the _compressed, _original_length and (with a key)
// _entity_key flags set. Messages that are not Compressible come back as
// they are. The input is never modified.
func (c *Compressor) Compress(m models.HistoryMessage, key string) (models.HistoryMessage, error) {
	out := m.Clone()
	if !utf8.ValidString(m.Content) {
		return out, ErrInvalidUTF8
	}
	if !c.Compressible(m) {
		return out, nil
	}
	n := utf8.RuneCountInString(m.Content)
	head, tail := splitRunes(m.Content, c.t, n-c.t)
	return c.cut(out, head, tail, n, key), nil
}

// CompressParts is Compress for a message whose content arrives already cut:
// head and tail are its first and last T code points and length its length
// in code points (the database sends only these for a long answer; the
// middle never leaves the server). The result is byte for byte what Compress
// gives on the full content; m's own content is ignored. It is an error when
// the parts do not fit T (the query and the compressor disagree).
func (c *Compressor) CompressParts(m models.HistoryMessage, head, tail string, length int, key string) (models.HistoryMessage, error) {
	if !utf8.ValidString(head) || !utf8.ValidString(tail) {
		return m.Clone(), ErrInvalidUTF8
	}
	if length <= 2*c.t || utf8.RuneCountInString(head) != c.t || utf8.RuneCountInString(tail) != c.t {
		return m.Clone(), fmt.Errorf("compressor: parts (%d+%d of %d code points) do not fit T = %d",
			utf8.RuneCountInString(head), utf8.RuneCountInString(tail), length, c.t)
	}
	return c.cut(m.Clone(), head, tail, length, key), nil
}

// The hint between a cut message's head and tail opens and closes with
// these; SplitHint reads what cut writes.
const (
	hintOpen  = "\n\n... [Message truncated - "
	hintClose = "] ...\n\n"
)

// cut assembles the compressed message: the one place that writes the hint.
func (c *Compressor) cut(out models.HistoryMessage, head, tail string, n int, key string) models.HistoryMessage {
	var hint string
	if key != "" {
		hint = hintOpen + "REM LOOKUP " + key + " to recover full content" + hintClose
	} else {
		hint = hintOpen + strconv.Itoa(n-2*c.t) + " characters omitted" + hintClose
	}
	out.Content = head + hint + tail
	out.Compressed = true
	out.OriginalLength = n
	out.EntityKey = key
	return out
}

// splitRunes returns s up to code point i and s from code point j on.
func splitRunes(s string, i, j int) (string, string) {
	bi, bj := len(s), len(s)
	k := 0
	for off := range s {
		if k == i {
			bi = off
		}
		if k == j {
			bj = off
			break
		}
		k++
	}
	return s[:bi], s[bj:]
}

// Decompress restores the full content and drops the three flags.
func Decompress(m models.HistoryMessage, full string) models.HistoryMessage {
	out := m.Clone()
	out.Content = full
	out.Compressed, out.OriginalLength, out.EntityKey = false, 0, ""
	return out
}

// EntityKey returns the REM LOOKUP key of a compressed message.
func EntityKey(m models.HistoryMessage) (string, bool) {
	return m.EntityKey, m.Compressed && m.EntityKey != ""
}

// CompressHistory applies the load-time rule to a whole history, the key of
// message i being BuildKey(sessionID, i). The input is not modified.
func (c *Compressor) CompressHistory(sessionID string, msgs []models.HistoryMessage) ([]models.HistoryMessage, error) {
	out := make([]models.HistoryMessage, len(msgs))
	for i, m := range msgs {
		if !c.ShouldCompressOnLoad(m) {
			out[i] = m.Clone()
			continue
		}
		cm, err := c.Compress(m, BuildKey(sessionID, i))
		if err != nil {
			return nil, &models.FieldError{Index: i, Field: "content", Reason: err.Error()}
		}
		out[i] = cm
	}
	return out, nil
}

// SplitHint splits a cut message's content at the hint cut wrote: head,
// the hint trimmed of its blank lines, and tail. With a key, only the hint
// naming that key counts (a head may quote another message's hint). ok is
// false, and head the whole content, when there is no such hint.
func SplitHint(content, key string) (head, hint, tail string, ok bool) {
	i := strings.Index(content, hintOpen)
	if key != "" {
		i = strings.Index(content, hintOpen+"REM LOOKUP "+key)
	}
	if i < 0 {
		return content, "", "", false
	}
	j := strings.Index(content[i:], hintClose)
	if j < 0 {
		return content, "", "", false
	}
	j += i + len(hintClose)
	return content[:i], strings.TrimSpace(content[i:j]), content[j:], true
}

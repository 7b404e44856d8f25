package convert

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/visible"
)

// Options controls a conversion.
type Options struct {
	// SystemPrompt, when not empty, becomes the first request, and replaces
	// any system prompt stored with pydantic-ai messages (stored system
	// messages of other writers are left out by the contract with the Python service anyway): the model
	// gets one system prompt, the one given. pydantic-ai adds its own
	// system prompt only to an empty history, so multi-turn callers must
	// pass it here.
	SystemPrompt string
	// OnUnmapped, when set, is told of each message the conversion leaves
	// out because its role has no pydantic-ai form (a role outside the Python service's roles,
	// which only the Python service writes); callers say so (a warning, a header).
	// Stored system messages are not reported: the contract with the Python service skips them by rule.
	OnUnmapped func(Unmapped)
	// Strict makes such a message an error (a *models.FieldError naming
	// its position and role) instead.
	Strict bool
	// Now is the time used for messages without a (parseable) timestamp;
	// nil means time.Now. Set it for reproducible output.
	Now func() time.Time
}

// ModelName is what synthesized responses say produced them.
const ModelName = "recovered"

// Message is a pydantic-ai ModelRequest or ModelResponse.
type Message struct {
	Parts     []Part `json:"parts"`
	Usage     *Usage `json:"usage,omitempty"`
	ModelName string `json:"model_name,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
	Kind      string `json:"kind"` // "request" or "response"
	// Raw, when set, is the whole message as pydantic-ai wrote it, rebuilt
	// from the rows' SourceKey; it is written instead of the fields above.
	Raw json.RawMessage `json:"-"`
}

// Part is one message part; PartKind selects which fields apply.
type Part struct {
	ToolName   string          `json:"tool_name,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	Args       json.RawMessage `json:"args,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Timestamp  string          `json:"timestamp,omitempty"`
	// PartKind is system-prompt, user-prompt, text, tool-call or tool-return.
	PartKind string `json:"part_kind"`
}

// Usage is pydantic-ai's RequestUsage with the fields 1.42 and 2.x share, all
// zero: the history carries no token counts, and null is rejected.
type Usage struct {
	InputTokens          int            `json:"input_tokens"`
	CacheWriteTokens     int            `json:"cache_write_tokens"`
	CacheReadTokens      int            `json:"cache_read_tokens"`
	OutputTokens         int            `json:"output_tokens"`
	InputAudioTokens     int            `json:"input_audio_tokens"`
	CacheAudioReadTokens int            `json:"cache_audio_read_tokens"`
	OutputAudioTokens    int            `json:"output_audio_tokens"`
	Details              map[string]int `json:"details"`
}

// Convert builds the pydantic-ai messages for a history: it collects a
// Stream, so the two cannot disagree. It ignores Strict; Collect honours it.
func Convert(history []models.HistoryMessage, o Options) []Message {
	o.Strict = false
	out, _ := Collect(history, o) // the collector never fails when not strict
	return out
}

// Collect is Convert with Strict's error.
func Collect(history []models.HistoryMessage, o Options) ([]Message, error) {
	out := []Message{}
	st := NewStream(o, func(m Message) error { out = append(out, m); return nil })
	for _, m := range history {
		if err := st.Add(m); err != nil {
			return nil, err
		}
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	return out, nil
}

// Stream converts a history message by message, handing each pydantic-ai
// message to emit as soon as it is complete: an assistant message is held only
// until the tool results that follow it end. Memory stays flat in the length
// of the history (the CLI and the HTTP API stream a load through it).
type Stream struct {
	o        Options
	emit     func(Message) error
	fallback string // conversion time, computed at most once
	pos      int    // the input position of the next message
	started  bool   // the system prompt is out
	asst     *models.HistoryMessage
	asstPos  int
	tools    []models.HistoryMessage
	req      *sourcedRequest // a request rebuilt from SourceKey, open for its next rows
	rawOnly  bool            // emit reads only Message.Raw of a rebuilt message, and is done with it on return (WriteStream)
	scratch  []byte          // where a rebuilt message is written when rawOnly
}

// NewStream returns a Stream writing to emit.
func NewStream(o Options, emit func(Message) error) *Stream {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Stream{o: o, emit: emit}
}

func (s *Stream) stamp(m *models.HistoryMessage) string {
	if m != nil && m.Timestamp != nil {
		if z, ok := utcZ(*m.Timestamp); ok {
			return z
		}
		if t, err := models.ParseTimestamp(*m.Timestamp); err == nil {
			return FormatTimestamp(t)
		}
	}
	if s.fallback == "" {
		s.fallback = FormatTimestamp(s.o.Now())
	}
	return s.fallback
}

// start emits the system prompt, stamped with the first message's time.
func (s *Stream) start(first *models.HistoryMessage) error {
	if s.started {
		return nil
	}
	s.started = true
	if s.o.SystemPrompt == "" {
		return nil
	}
	return s.emit(Message{Kind: "request", Parts: []Part{{
		Content: jsonString(s.o.SystemPrompt), Timestamp: s.stamp(first), PartKind: "system-prompt"}}})
}

// Add converts the next history message.
func (s *Stream) Add(m models.HistoryMessage) error {
	if err := s.start(&m); err != nil {
		return err
	}
	pos := s.pos
	s.pos++
	// A source is rebuilt when the row's view holds every part it sends;
	// one stored before the view's rules that holds more is left out, and
	// the row converts by its own fields, as a row without one.
	if src, ok := sourceOf(&m); ok && !visible.OfSource(m, &src).Withholds(SourceKey) {
		if err := s.flush(); err != nil {
			return err
		}
		return s.addSourced(&m, src)
	}
	if err := s.flushSourced(); err != nil {
		return err
	}
	if s.asst != nil && m.Role.IsTool() {
		s.tools = append(s.tools, m)
		return nil
	}
	if err := s.flush(); err != nil {
		return err
	}
	switch m.Role.Normalize() {
	case models.RoleUser:
		return s.emit(Message{Kind: "request", Parts: []Part{{
			Content: jsonString(m.Content), Timestamp: s.stamp(&m), PartKind: "user-prompt"}}})
	case models.RoleAssistant:
		s.asst, s.asstPos = &m, pos
	case models.RoleTool: // no assistant before it
		return s.emitAll(appendTurn(nil, nil, []models.HistoryMessage{m}, pos, s.stamp))
	case models.RoleSystem: // skipped by rule: the system prompt is the caller's
	default:
		u := Unmapped{Index: pos, Role: m.Role}
		if s.o.Strict {
			return &models.FieldError{Index: pos, Field: "role", Reason: u.reason() + " (strict)"}
		}
		if s.o.OnUnmapped != nil {
			s.o.OnUnmapped(u)
		}
	}
	return nil
}

// Unmapped is a history message a conversion left out.
type Unmapped struct {
	Index int // its position in the history
	Role  models.Role
}

func (u Unmapped) reason() string {
	return strconv.Quote(string(u.Role)) + " has no pydantic-ai form; the message is left out"
}

// Unmappeds collects what a conversion left out, for a one-line report.
type Unmappeds struct {
	N     int
	first []Unmapped
}

// Add is an Options.OnUnmapped.
func (c *Unmappeds) Add(u Unmapped) {
	c.N++
	if len(c.first) < 3 {
		c.first = append(c.first, u)
	}
}

// String is the report: `2 messages left out of the pydantic-ai history:
// message 3 (role "bot"), message 5 (role "USER")`, "" when none.
func (c *Unmappeds) String() string {
	if c.N == 0 {
		return ""
	}
	var b strings.Builder
	if c.N == 1 {
		b.WriteString("1 message left out of the pydantic-ai history: ")
	} else {
		b.WriteString(strconv.Itoa(c.N) + " messages left out of the pydantic-ai history: ")
	}
	for i, u := range c.first {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("message " + strconv.Itoa(u.Index) + " (role " + strconv.Quote(string(u.Role)) + ")")
	}
	if c.N > len(c.first) {
		b.WriteString(", …")
	}
	b.WriteString("; their roles have no pydantic-ai form")
	return b.String()
}

// Close emits what is held (and the system prompt of an empty history).
func (s *Stream) Close() error {
	if err := s.start(nil); err != nil {
		return err
	}
	if err := s.flushSourced(); err != nil {
		return err
	}
	return s.flush()
}

// flush emits the held assistant message with its tool results.
func (s *Stream) flush() error {
	if s.asst == nil {
		return nil
	}
	msgs := appendTurn(nil, s.asst, s.tools, s.asstPos+1, s.stamp)
	s.asst, s.tools = nil, s.tools[:0]
	return s.emitAll(msgs)
}

func (s *Stream) emitAll(msgs []Message) error {
	for _, m := range msgs {
		if err := s.emit(m); err != nil {
			return err
		}
	}
	return nil
}

// Writer streams converted messages to w as the JSON array Marshal writes,
// byte for byte: Stream's emit for an io.Writer.
type Writer struct {
	w   io.Writer
	n   int
	buf []byte
}

// NewWriter returns a Writer on w; Close writes the closing bracket.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write is a Stream's emit: one message, with the separator before it.
func (w *Writer) Write(m Message) error {
	w.buf = w.buf[:0]
	if w.n == 0 {
		w.buf = append(w.buf, '[')
	} else {
		w.buf = append(w.buf, ',')
	}
	w.n++
	w.buf = appendMessage(w.buf, m)
	_, err := w.w.Write(w.buf)
	return err
}

// Count is how many messages were written.
func (w *Writer) Count() int { return w.n }

// Close ends the array.
func (w *Writer) Close() error {
	end := "]\n"
	if w.n == 0 {
		end = "[]\n"
	}
	_, err := io.WriteString(w.w, end)
	return err
}

// appendTurn adds the response of an assistant message (nil for an orphan
// tool) with its tool calls (Pair: the typed calls, then one synthesized per
// result that answers none), then the request with the returns. first is
// the input position of tools[0].
func appendTurn(out []Message, asst *models.HistoryMessage, tools []models.HistoryMessage, first int, stamp func(*models.HistoryMessage) string) []Message {
	t := Pair(asst, tools, first)
	var parts, returns []Part
	for _, c := range t.Calls {
		parts = append(parts, Part{ToolName: c.Name, Args: ArgsObject(c), ToolCallID: c.ID, PartKind: "tool-call"})
	}
	for _, r := range t.Results {
		returns = append(returns, Part{ToolName: r.Name, Content: returnContent(r.Content), ToolCallID: r.CallID,
			Timestamp: stamp(r.Message), PartKind: "tool-return"})
	}
	if asst != nil && asst.Content != "" {
		parts = append(parts, Part{Content: jsonString(asst.Content), PartKind: "text"})
	}
	if len(parts) > 0 {
		src := asst
		if src == nil {
			src = &tools[0]
		}
		out = append(out, Message{Kind: "response", Parts: parts, Usage: &Usage{Details: map[string]int{}},
			ModelName: ModelName, Timestamp: stamp(src)})
	}
	if len(returns) > 0 {
		out = append(out, Message{Kind: "request", Parts: returns})
	}
	return out
}

// SanitizeToolName replaces every character outside [a-zA-Z0-9_-] with "_";
// an empty name becomes "unknown_tool".
func SanitizeToolName(name string) string {
	if name == "" {
		return "unknown_tool"
	}
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, name)
}

// returnContent is the tool content parsed as JSON, {"raw": content} when it
// is not JSON, {} when empty.
func returnContent(content string) json.RawMessage {
	if content == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(content)) {
		return compact([]byte(content))
	}
	var b bytes.Buffer
	b.WriteString(`{"raw":`)
	b.Write(jsonString(content))
	b.WriteByte('}')
	return b.Bytes()
}

// utcZ rewrites the form loads produce, Python's isoformat of a UTC time
// ("2024-01-15T10:30:00[.ffffff]+00:00"), to pydantic's ("...Z") without
// parsing it; ok is false for any other form.
func utcZ(s string) (string, bool) {
	const frac = len("2006-01-02T15:04:05.000000+00:00")
	if (len(s) != frac && len(s) != frac-7) || s[len(s)-6:] != "+00:00" || s[10] != 'T' {
		return "", false
	}
	for i, c := range []byte(s[:len(s)-6]) {
		switch i {
		case 4, 7:
			if c != '-' {
				return "", false
			}
		case 10:
		case 13, 16:
			if c != ':' {
				return "", false
			}
		case 19:
			if c != '.' {
				return "", false
			}
		default:
			if c < '0' || c > '9' {
				return "", false
			}
		}
	}
	if len(s) == frac && s[19:26] == ".000000" {
		return s[:19] + "Z", true
	}
	return s[:len(s)-6] + "Z", true
}

// FormatTimestamp prints t as pydantic does: UTC, "Z", microseconds only when
// not zero.
func FormatTimestamp(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000000Z")
}

// JSON converts and encodes in one step: a compact JSON array.
func JSON(history []models.HistoryMessage, o Options) ([]byte, error) {
	msgs, err := Collect(history, o)
	if err != nil {
		return nil, err
	}
	return Marshal(msgs), nil
}

// Marshal encodes converted messages: the bytes encoding/json would write
// (HTML escaping off, with a final newline), written without reflection.
func Marshal(msgs []Message) []byte {
	return appendJSON(make([]byte, 0, 512*len(msgs)+64), msgs)
}

func jsonString(s string) json.RawMessage { return appendString(nil, s) }

func compact(raw []byte) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return bytes.Clone(raw)
	}
	return b.Bytes()
}

// WriteStream converts the history that each hands over, message by message,
// and writes the JSON array Marshal would write to w, holding no more than a
// tool run. each is typically a store's LoadEach. written is how many
// messages reached w: a failure after the first cannot become an error
// response any more.
func WriteStream(w io.Writer, o Options, each func(fn func(models.HistoryMessage) error) error) (written int, err error) {
	jw := NewWriter(w)
	st := NewStream(o, jw.Write)
	st.rawOnly = true
	if err := each(st.Add); err != nil {
		return jw.Count(), err
	}
	if err := st.Close(); err != nil {
		return jw.Count(), err
	}
	return jw.Count(), jw.Close()
}

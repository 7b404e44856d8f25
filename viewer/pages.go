package viewer

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/visible"
)

// msgView is one message of the session page.
type msgView struct {
	Index      int
	Role       string
	Time       string
	Length     int // code points of the full text
	Sent       int // code points the agent gets
	Compressed bool
	Head, Tail string
	Marker     string
	Key        string
	Content    string
	Bar        bar
	// Tool fields: a tool message is drawn as the call remstore synthesizes
	// and the return it answers.
	ToolCallID, ToolName, ToolArgs string
	// What else the row's view (package visible) holds, which the
	// history view draws whole: what a model may be sent for the row.
	Calls     []callView      // an assistant message's tool calls
	Media     []mediaView     // images, documents, audio, video, files
	Reasoning []reasoningView // what a provider issued beside the answer
	Other     []otherView     // what a kept source or item adds, whole
	Withheld  []visible.Withheld

	Compaction     bool
	ReplacesBefore int
	// What it cost and who made it (usage, author, model: stored extras).
	In, Out       int
	Author, Model string
	// The trace that stored it (trace_id, span_id), and where the user's
	// tracing system shows it (Options.TraceURL; "" without one).
	TraceID, SpanID, TraceLink string
	// Failure is the failed step it records (convert.Failure, set by the
	// page, which needs it for its totals too), or "".
	Failure string
	JSON    string // the message as the store returns it (Copy as JSON)
	// Preview is the start of a long message that is not cut (a user or
	// tool message, an answer shown whole): the page draws it folded, the
	// whole text a click away.
	Preview string
}

// foldAt is the length (code points) above which a message not cut is drawn
// folded, and foldPreview how much of it shows.
const (
	foldAt      = 2000
	foldPreview = 400
)

// usageTotals sums tokens over messages, and counts the models.
type usageTotals struct {
	In, Out, Messages int
	Models            []string
}

func (u *usageTotals) add(in, out int, model string) {
	if in == 0 && out == 0 && model == "" {
		return
	}
	u.In, u.Out, u.Messages = u.In+in, u.Out+out, u.Messages+1
	if model != "" && !slices.Contains(u.Models, model) {
		u.Models = append(u.Models, model)
	}
}

type callView struct{ ID, Name, Args string }

// mediaView is one file a model is sent: by link, provider file id, or
// bytes (their size and type only are drawn).
type mediaView struct {
	From, Kind, URL, FileID, MediaType, Name string
	Bytes                                    int // -1: by link or id
}

// reasoningView is one reasoning item: its text, when the model is sent
// one, and the provider's seal, shortened.
type reasoningView struct {
	From, Provider, Kind, Text, Seal, ID string
	SealLen                              int
}

type otherView struct{ From, Kind, JSON string }

// viewParts fills mv's view-only fields from the row's view.
func viewParts(mv *msgView, v visible.View) {
	for _, c := range v.Calls {
		mv.Calls = append(mv.Calls, callView{ID: c.ID, Name: c.Name, Args: pretty(json.RawMessage(c.Arguments))})
	}
	for _, m := range v.Media {
		mv.Media = append(mv.Media, mediaView{From: m.From, Kind: m.Kind, URL: m.URL, FileID: m.FileID,
			MediaType: m.MediaType, Name: m.Name, Bytes: dataBytes(m)})
	}
	for _, r := range v.Reasoning {
		seal := r.Seal
		if n := utf8.RuneCountInString(seal); n > 24 {
			seal = string([]rune(seal)[:24]) + "…"
		}
		mv.Reasoning = append(mv.Reasoning, reasoningView{From: r.From, Provider: r.Provider, Kind: r.Kind, Text: r.Text,
			Seal: seal, SealLen: len(r.Seal), ID: r.ID})
	}
	for _, o := range v.Other {
		mv.Other = append(mv.Other, otherView{From: o.From, Kind: o.Kind, JSON: pretty(o.JSON)})
	}
	mv.Withheld = v.Withheld
}

// dataBytes is the size of a file sent as bytes (base64 as stored), -1
// for one sent by link or id.
func dataBytes(m visible.Media) int {
	if m.Data == "" {
		return -1
	}
	if b, err := base64.StdEncoding.DecodeString(m.Data); err == nil {
		return len(b)
	}
	return len(m.Data)
}

// bar is a horizontal bar drawn in SVG (attributes, not inline style, so the
// CSP needs no 'unsafe-inline'): Fill of Width, with a tick at Mark.
type bar struct {
	Width, Fill, Mark int
	Over              bool
}

const barWidth = 240

// lengthBar draws n against 2T: the tick is 2T, the bar's full width 4T
// (longer is drawn full).
func lengthBar(n, t int) bar {
	full := 4 * t
	fill := n * barWidth / full
	if fill > barWidth {
		fill = barWidth
	}
	if n > 0 && fill == 0 {
		fill = 1
	}
	return bar{Width: barWidth, Fill: fill, Mark: barWidth / 2}
}

// sessionJSON is the session's every stored row in full, as JSON (Copy),
// written as the rows arrive: memory flat however long the session.
func (v *Viewer) sessionJSON(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	if _, err := q.store.SessionInfo(r.Context(), key); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	enc := models.NewHistoryEncoder(w)
	err := q.store.LoadEach(r.Context(), key, sessionstore.LoadOptions{Extras: true, NoCompress: true, IgnoreCompaction: true}, enc.Encode)
	if err != nil {
		return err // before the first message: an error page; after it: a cut body
	}
	return enc.Close()
}

// compactionOf reads whether a message is a compaction summary and how many
// positions before it the summary replaces.
func compactionOf(m models.HistoryMessage) (replacesBefore int, ok bool) {
	for _, f := range m.Extra {
		var c struct {
			ReplacesBefore int `json:"replaces_before"`
		}
		if f.Key == "compaction" && json.Unmarshal(f.Value, &c) == nil {
			return c.ReplacesBefore, true
		}
	}
	return 0, false
}

// usageOf reads a message's token usage, author and model from its extras.
func usageOf(m models.HistoryMessage) (in, out int, author, model string) {
	for _, f := range m.Extra {
		switch f.Key {
		case "usage":
			var u struct {
				In  int `json:"input_tokens"`
				Out int `json:"output_tokens"`
			}
			if json.Unmarshal(f.Value, &u) == nil {
				in, out = u.In, u.Out
			}
		case "author":
			_ = json.Unmarshal(f.Value, &author)
		case "model":
			_ = json.Unmarshal(f.Value, &model)
		case "pydantic_ai":
			var src struct {
				Model string `json:"model_name"`
			}
			if json.Unmarshal(f.Value, &src) == nil && model == "" {
				model = src.Model
			}
		}
	}
	return in, out, author, model
}

func (v *Viewer) sessionPage(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	// all=1: every stored row, also those a compaction summary replaced.
	// ts (a search result): the page that starts at the message stored at
	// that time, scrolled to it; every row is shown, as search finds them.
	ts := r.URL.Query().Get("ts")
	all := r.URL.Query().Get("all") == "1" || ts != ""
	info, err := q.store.SessionInfo(r.Context(), key)
	if err != nil {
		return err
	}
	lo := sessionstore.LoadOptions{Extras: true, IgnoreCompaction: all}
	if ts != "" {
		at := -1
		i := 0
		err := q.store.LoadEach(r.Context(), key, lo, func(m models.HistoryMessage) error {
			if m.Timestamp != nil && *m.Timestamp == ts {
				at = i
				return errFound
			}
			i++
			return nil
		})
		if err != nil && !errors.Is(err, errFound) {
			return err
		}
		if at < 0 {
			v.fail(w, r, http.StatusNotFound, "no message of this session was stored at "+ts)
			return nil
		}
		http.Redirect(w, r, fmt.Sprintf("/ui/sessions/%s?all=1&from=%d#m%d", info.ID, at, at), http.StatusSeeOther)
		return nil
	}
	t := v.o.TruncateLength
	view := r.URL.Query().Get("view")
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	base := "/ui/sessions/" + info.ID.String()
	if view == "pydantic" {
		return v.pydanticPage(w, r, q, key, info, lo, from, base)
	}
	// The history streams: totals over every message, drawn views for the
	// page's only ( H1: a 200,000-message session was built whole
	// for each request). A page asked past the end is drawn again, as the
	// last one, once the count is known.
	var (
		msgs   []msgView
		tot    pageTotals
		window = page{From: max(0, from), To: max(0, from) + pageSize}
		drawn  = window
	)
	// ?failed=1 draws the failed steps only (convert.Failure), paged
	// among themselves; positions stay the history's.
	failedOnly := r.URL.Query().Get("failed") == "1"
	// A tool message is drawn with its call as the model gets it: the
	// arguments convert.Pair sends (the pydantic-ai history's and every
	// adapter's), known once the tool messages of its turn end.
	sentArgs := func(_ int, _ *models.HistoryMessage, turn *convert.Turn) error {
		if turn != nil {
			drawSentArgs(msgs, turn)
		}
		return nil
	}
	var turns *convert.Walker
	each := func(count bool) func(models.HistoryMessage) error {
		pos, i := 0, 0 // the message's position; its place among those drawn
		turns = convert.NewWalker(sentArgs)
		return func(m models.HistoryMessage) error {
			defer func() { pos++ }()
			if err := turns.Add(m); err != nil {
				return err
			}
			failure := convert.Failure(m) // once: the totals, the filter and the mark
			if count {                    // the first pass; the second draws a page only
				tot.add(m, all, failure)
			}
			if failedOnly && failure == "" {
				return nil
			}
			defer func() { i++ }()
			if i < drawn.From || i >= drawn.To {
				return nil
			}
			in, out, author, model := usageOf(m)
			replaces, isSummary := compactionOf(m)
			mv := messageView(pos, m, t, replaces, isSummary, in, out, author, model)
			mv.TraceLink, mv.Failure = v.traceLink(mv.TraceID, mv.SpanID), failure
			msgs = append(msgs, mv)
			return nil
		}
	}
	if err := q.store.LoadEach(r.Context(), key, lo, each(true)); err != nil {
		return err
	}
	if err := turns.Close(); err != nil {
		return err
	}
	total, query := tot.count, ""
	if failedOnly {
		total, query = tot.failed, "&failed=1"
	}
	pg := pageOf(from, total, base, view+query)
	if pg.From != window.From && total > 0 {
		msgs, drawn = nil, page{From: pg.From, To: pg.To}
		if err := q.store.LoadEach(r.Context(), key, lo, each(false)); err != nil {
			return err
		}
		if err := turns.Close(); err != nil {
			return err
		}
	}
	d := v.sessionData(q, info, key, all, tot, pg)
	d["Messages"], d["View"], d["FailedOnly"] = msgs, "history", failedOnly
	v.render(w, http.StatusOK, "session", d)
	return nil
}

// pageTotals are a session page's figures over every message it streams:
// count, characters stored and sent, usage, and how many rows the shown
// compaction summary stands for.
type pageTotals struct {
	count, stored, sent, replaced int
	failed                        int // messages convert.Failure marks
	usage                         usageTotals
}

// add counts m; failure is convert.Failure(m), which the caller has.
func (p *pageTotals) add(m models.HistoryMessage, all bool, failure string) {
	in, out, _, model := usageOf(m)
	p.usage.add(in, out, model)
	if replaces, isSummary := compactionOf(m); isSummary && !all {
		p.replaced = replaces
	}
	n := utf8.RuneCountInString(m.Content)
	length := n
	if m.Compressed {
		length = m.OriginalLength
	}
	p.count, p.stored, p.sent = p.count+1, p.stored+length, p.sent+n
	if failure != "" {
		p.failed++
	}
}

// sessionData is what both views of a session page show around their
// messages.
func (v *Viewer) sessionData(q *request, info sessionstore.SessionInfo, key string, all bool, tot pageTotals, pg page) map[string]any {
	t := v.o.TruncateLength
	d := v.base(q, "Session "+info.Name)
	d["All"], d["Replaced"], d["Usage"] = all, tot.replaced, tot.usage
	d["Info"], d["Key"], d["T"], d["TwoT"], d["Count"] = info, key, t, 2*t, tot.count
	d["Stored"], d["SentChars"], d["SizeBar"], d["Page"] = tot.stored, tot.sent, sizeBar(tot.stored, tot.sent), pg
	d["Failed"] = tot.failed
	return d
}

// errFound stops a stream at the message it looked for.
var errFound = errors.New("found")

// messageView is one drawn message of the history page.
func messageView(i int, m models.HistoryMessage, t, replaces int, isSummary bool, in, out int, author, model string) msgView {
	n := utf8.RuneCountInString(m.Content)
	length := n
	if m.Compressed {
		length = m.OriginalLength
	}
	mv := msgView{Index: i, Role: string(m.Role), Content: m.Content, Sent: n, Length: length,
		Compaction: isSummary, ReplacesBefore: replaces, In: in, Out: out, Author: author, Model: model}
	if m.Timestamp != nil {
		mv.Time = *m.Timestamp
	}
	if m.Compressed {
		mv.Compressed, mv.Key = true, m.EntityKey
		mv.Head, mv.Marker, mv.Tail = splitCut(m.Content, m.EntityKey)
	}
	mv.ToolCallID, mv.ToolName = m.ToolCallID, m.ToolName
	if m.Role == models.RoleTool {
		mv.Content = prettyText(m.Content)
	}
	if len(m.ToolArguments) > 0 {
		mv.ToolArgs = pretty(m.ToolArguments)
	}
	viewParts(&mv, visible.Of(m))
	mv.TraceID, _ = m.ExtraString("trace_id")
	mv.SpanID, _ = m.ExtraString("span_id")
	if b, err := json.Marshal(m); err == nil {
		mv.JSON = escapeBidi(string(literalHTML(b)))
	}
	mv.Bar = lengthBar(mv.Length, t)
	mv.Bar.Over = mv.Compressed // only what was cut is drawn as cut
	if !mv.Compressed && n > foldAt {
		mv.Preview = string([]rune(mv.Content)[:foldPreview])
	}
	return mv
}

// drawSentArgs gives the drawn views of a turn's tool messages the
// arguments of the call each answers, as convert.Pair sends them
// (convert.CallArguments): a stored call's, or the tool message's own
// tool_arguments, or its content, by that rule.
func drawSentArgs(views []msgView, turn *convert.Turn) {
	args := make(map[string]string, len(turn.Calls))
	for _, c := range turn.Calls {
		args[c.ID] = pretty(convert.ArgsObject(c))
	}
	for _, r := range turn.Results {
		// Views are in history order and the turn is the latest: look back.
		for k := len(views) - 1; k >= 0 && views[k].Index >= r.Index; k-- {
			if views[k].Index == r.Index {
				views[k].ToolArgs = args[r.CallID]
			}
		}
	}
}

// pydanticPage is the session as pydantic-ai messages, streamed as the
// history is: the history's rows go through the converter one by one, and
// only the page's pydantic-ai messages are drawn.
func (v *Viewer) pydanticPage(w http.ResponseWriter, r *http.Request, q *request, key string, info sessionstore.SessionInfo, lo sessionstore.LoadOptions, from int, base string) error {
	var (
		pv     []pydanticMsg
		tot    pageTotals
		total  int // pydantic-ai messages
		window = page{From: max(0, from), To: max(0, from) + pageSize}
	)
	pass := func(count bool, drawn page) error {
		i := 0
		st := convert.NewStream(convert.Options{}, func(m convert.Message) error {
			if i >= drawn.From && i < drawn.To {
				pv = append(pv, pydanticMsgOf(m))
			}
			i++
			return nil
		})
		err := q.store.LoadEach(r.Context(), key, lo, func(m models.HistoryMessage) error {
			if count {
				tot.add(m, lo.IgnoreCompaction, convert.Failure(m))
			}
			return st.Add(m)
		})
		if err == nil {
			err = st.Close()
		}
		total = i
		return err
	}
	if err := pass(true, window); err != nil {
		return err
	}
	pg := pageOf(from, total, base, "pydantic")
	if pg.From != window.From && total > 0 {
		pv = nil
		if err := pass(false, page{From: pg.From, To: pg.To}); err != nil {
			return err
		}
	}
	d := v.sessionData(q, info, key, lo.IgnoreCompaction, tot, pg)
	d["Messages"], d["View"], d["Pydantic"] = []msgView(nil), "pydantic", pv
	v.render(w, http.StatusOK, "session", d)
	return nil
}

// pageSize bounds the messages one page draws: a session of 100,000
// messages is read in full (for its totals) but drawn a page at a time.
const pageSize = 500

// page is the window of messages a session page draws, with links to the
// windows before and after it ("" when there is none).
type page struct {
	From, To, Total int
	Prev, Next      string
}

func pageOf(from, total int, base, view string) page {
	from = max(0, min(from, total-1)) // past the end: the last message
	pg := page{From: from, To: min(from+pageSize, total), Total: total}
	link := func(at int) string {
		u := base + "?from=" + strconv.Itoa(at)
		v, query, _ := strings.Cut(view, "&")
		if v == "pydantic" {
			u += "&view=pydantic"
		}
		if query != "" { // a filter the links keep (?failed=1)
			u += "&" + query
		}
		return u
	}
	if from > 0 {
		pg.Prev = link(max(0, from-pageSize))
	}
	if pg.To < total {
		pg.Next = link(pg.To)
	}
	return pg
}

// sizeBar draws characters sent against characters stored.
func sizeBar(stored, sent int) bar {
	if stored == 0 {
		return bar{Width: barWidth}
	}
	fill := sent * barWidth / stored
	if sent > 0 && fill == 0 {
		fill = 1
	}
	return bar{Width: barWidth, Fill: fill, Mark: barWidth}
}

// splitCut splits a cut message into head, hint and tail at the hint the
// compressor wrote (compressor.SplitHint).
func splitCut(content, key string) (head, marker, tail string) {
	head, marker, tail, _ = compressor.SplitHint(content, key)
	return head, marker, tail
}

// pretty indents JSON (a JSON string holding JSON is shown decoded).
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
		raw = json.RawMessage(s)
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return string(literalHTML(b.Bytes()))
}

// literalHTML turns the \u003c, \u003e and \u0026 escapes that Go's and
// other JSON encoders write into <, > and & again: on the page they are
// text (escaped by the template), and the reader wants to see "<". An
// escaped backslash before "u003c" is left alone.
func literalHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+6 <= len(b) {
			switch strings.ToLower(string(b[i+2 : i+6])) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1
	}
	return out
}

// prettyText shows a tool's return indented when it is JSON, as is.
func prettyText(s string) string {
	if t := strings.TrimSpace(s); t == "" || (t[0] != '{' && t[0] != '[') || !json.Valid([]byte(t)) {
		return s
	}
	return pretty(json.RawMessage(s))
}

type partView struct {
	Kind, ToolName, ToolCallID, Body string
}

type pydanticMsg struct {
	Kind, Model, Time string
	Parts             []partView
}

// pydanticView is what remstore sends pydantic-ai for this history.
func pydanticView(hist []models.HistoryMessage) []pydanticMsg {
	var out []pydanticMsg
	for _, m := range convert.Convert(hist, convert.Options{}) {
		out = append(out, pydanticMsgOf(m))
	}
	return out
}

// pydanticMsgOf is one pydantic-ai message as the page draws it.
func pydanticMsgOf(m convert.Message) pydanticMsg {
	pm := pydanticMsg{Kind: m.Kind, Model: m.ModelName, Time: m.Timestamp}
	for _, p := range m.Parts {
		body := p.Content
		if len(p.Args) > 0 {
			body = p.Args
		}
		var s string
		text := pretty(body)
		if json.Unmarshal(body, &s) == nil {
			text = s
		}
		pm.Parts = append(pm.Parts, partView{Kind: p.PartKind, ToolName: p.ToolName, ToolCallID: p.ToolCallID, Body: text})
	}
	return pm
}

// --- audit ---

type invView struct {
	N      int
	Time   string
	Agent  string
	Prompt string
	System string // the system prompt remstore sent first (system_prompt), or the recorded request's
	// SystemInRequest: System was read from the recorded request (the
	// agent sent it), not from the dump's system_prompt.
	SystemInRequest bool
	// Sent counts what the recorded request sent, in its API's words ("7
	// messages"), for a call that is not a pydantic-ai load's.
	Sent     string
	Raw      int
	Pydantic int
	File     string
	history  []auditMsg
	Cut      int
	Chars    int // characters of the history it saw
	// What the caller recorded of the model call (audit.Exchange), "" or
	// zero when it did not.
	Model               string
	Latency             float64 // ms; 0 with Measured false: not recorded
	Measured            bool
	UsageIn, UsageOut   int
	HasUsage            bool
	Tools               []string // the offered tools' names
	ToolsJSON, Settings string
	Request, Answer     string  // pretty JSON
	Start, Dur          float64 // ms from the session's first call, and the call's duration (recorded, or to its answer's row)
	BarX, BarW          int     // the waterfall bar, in thousandths of the calls' span
}

type auditMsg struct {
	Role, Time, Content string
	Compressed          bool
	Length              int
	raw                 map[string]any // the dict as recorded
}

type diffView struct {
	A, B                int
	Added, Dropped, Cut []auditMsg
	Kept                int
}

// auditCalls is what the audit pages share: the session, the agent calls
// recorded in its own dump, oldest first, and the rows they saw. The dump
// is the file named by the session's UUID (every writer resolves the name
// it was given, as the store does), so it holds this session's calls and
// no other's: nothing else in the directory is read, and no other file,
// however many, can hide them (the contract with the Python service: what one tenant records can
// neither hide nor slow another's).
//
// Memory follows the dump, which audit.MaxFileBytes bounds, not the
// session: the dump is read first, then the session streams past and only
// the rows its calls saw are kept (before, an index of every row: 90 MB
// for 200k messages).
type auditCalls struct {
	info    sessionstore.SessionInfo
	rows    map[string]rowRef // the rows the calls saw, by role and time
	invs    []invView
	file    string // the dump's name in the audit directory
	readErr string
}

// rowRef is what a call page needs of one stored row: where it is and what
// it cost.
type rowRef struct {
	idx, in, out int
	model        string
}

func (v *Viewer) auditCalls(r *http.Request, q *request, key string) (auditCalls, error) {
	var a auditCalls
	info, err := q.store.SessionInfo(r.Context(), key)
	if err != nil {
		return a, err
	}
	a.info = info
	if v.o.AuditDir == "" {
		return a, nil
	}
	sid := info.ID.String()
	a.file = audit.FileName(sid)
	f, err := audit.ReadContext(audit.WithReader(r.Context(), q.si.budget), v.o.AuditDir, sid)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return a, nil
	case err != nil:
		a.readErr = err.Error()
		return a, nil
	case f.Unread > 0:
		a.readErr = fmt.Sprintf("%s set aside for this dump not read: with them it is past its bound", thousands(f.Unread)+" "+map[bool]string{true: "call", false: "calls"}[f.Unread == 1])
	}
	for _, inv := range f.Invocations {
		a.invs = append(a.invs, invOf(inv, a.file))
	}
	if len(a.invs) == 0 {
		return a, nil
	}
	sort.SliceStable(a.invs, func(i, j int) bool { return a.invs[i].Time < a.invs[j].Time })
	// The rows the calls saw, by role and stored time (to the microsecond):
	// found in the session below, or left out (a row removed since).
	a.rows = map[string]rowRef{}
	for i := range a.invs {
		a.invs[i].N = i
		for _, m := range a.invs[i].history {
			a.rows[m.Role+" "+m.Time] = rowRef{idx: -1}
		}
	}
	// Only each message's role and time are compared, so the load may cut
	// long answers on the server; compaction is ignored, so what a summary
	// replaced still counts.
	answers := newFirstAnswers(a.invs)
	i := 0
	err = q.store.LoadEach(r.Context(), key, sessionstore.LoadOptions{IgnoreCompaction: true, Extras: true}, func(m models.HistoryMessage) error {
		if m.Timestamp != nil {
			k := string(m.Role) + " " + *m.Timestamp
			if _, seen := a.rows[k]; seen {
				in, out, _, model := usageOf(m)
				a.rows[k] = rowRef{i, in, out, model}
			}
			if m.Role == models.RoleAssistant {
				if t, err := time.Parse(time.RFC3339Nano, *m.Timestamp); err == nil {
					answers.add(t)
				}
			}
		}
		i++
		return nil
	})
	if err != nil {
		return a, err
	}
	for k, ref := range a.rows {
		if ref.idx < 0 {
			delete(a.rows, k)
		}
	}
	waterfall(a.invs, answers)
	return a, nil
}

// auditPage shows the session's agent calls as a timeline and the diff of
// two of them.
func (v *Viewer) auditPage(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	ac, err := v.auditCalls(r, q, key)
	if err != nil {
		return err
	}
	info, invs, readErr := ac.info, ac.invs, ac.readErr
	d := v.base(q, "Audit of "+info.Name)
	d["Info"], d["Key"], d["Invocations"], d["AuditDir"], d["File"], d["ReadError"] = info, key, invs, v.o.AuditDir, ac.file, readErr
	a, errA := strconv.Atoi(r.URL.Query().Get("a"))
	b, errB := strconv.Atoi(r.URL.Query().Get("b"))
	d["SelA"], d["SelB"] = -1, -1
	if errA == nil {
		d["SelA"] = a
	}
	if errB == nil {
		d["SelB"] = b
	}
	if errA == nil && errB == nil && a >= 0 && b >= 0 && a < len(invs) && b < len(invs) {
		d["Diff"] = diff(invs[a], invs[b])
	} else if r.URL.Query().Has("a") {
		d["DiffError"] = fmt.Sprintf("choose two of the %d calls", len(invs))
	}
	v.render(w, http.StatusOK, "audit", d)
	return nil
}

func invOf(inv map[string]any, file string) invView {
	str := func(k string) string { s, _ := inv[k].(string); return s }
	num := func(k string) int {
		switch n := inv[k].(type) {
		case int:
			return n
		case float64:
			return int(n)
		}
		return 0
	}
	iv := invView{Time: str("timestamp"), Agent: str("agent_name"), Prompt: str("prompt"), System: str("system_prompt"), Raw: num("raw_history_count"),
		Pydantic: num("pydantic_messages_count"), File: file, Model: str("model")}
	exchangeOf(&iv, inv)
	if req, ok := inv["request"]; ok && req != nil {
		system, sent := requestFacts(req)
		if iv.System == "" && system != "" {
			iv.System, iv.SystemInRequest = system, true
		}
		if iv.Pydantic == 0 {
			iv.Sent = sent
		}
	}
	if ts, ok := inv["timestamp"].(fmt.Stringer); ok && iv.Time == "" {
		iv.Time = ts.String()
	}
	raw, _ := inv["raw_session_history"].([]any)
	for _, x := range raw {
		m, _ := x.(map[string]any)
		am := auditMsg{}
		am.Role, _ = m["role"].(string)
		am.Content, _ = m["content"].(string)
		am.Time, _ = m["timestamp"].(string)
		am.Compressed, _ = m["_compressed"].(bool)
		am.Length = utf8.RuneCountInString(am.Content)
		am.raw = m
		if am.Compressed {
			iv.Cut++
		}
		iv.Chars += am.Length
		iv.history = append(iv.history, am)
	}
	return iv
}

// exchangeOf reads what the caller recorded of the call (audit.Exchange's
// keys) into iv.
func exchangeOf(iv *invView, inv map[string]any) {
	switch l := inv["latency_ms"].(type) {
	case float64:
		iv.Latency, iv.Measured = l, true
	case int:
		iv.Latency, iv.Measured = float64(l), true
	}
	if u, ok := inv["usage"].(map[string]any); ok {
		// pydantic-ai and the SDKs' names for the same two counts.
		for _, k := range []string{"input_tokens", "prompt_tokens", "request_tokens", "promptTokenCount"} {
			if n, ok := u[k].(int); ok {
				iv.UsageIn, iv.HasUsage = n, true
				break
			}
		}
		for _, k := range []string{"output_tokens", "completion_tokens", "response_tokens", "candidatesTokenCount"} {
			if n, ok := u[k].(int); ok {
				iv.UsageOut, iv.HasUsage = n, true
				break
			}
		}
	}
	js := func(k string) string {
		v, ok := inv[k]
		if !ok || v == nil {
			return ""
		}
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		return escapeBidi(pretty(b))
	}
	iv.ToolsJSON, iv.Settings, iv.Request, iv.Answer = js("tools"), js("model_settings"), js("request"), js("answer")
	tools, _ := inv["tools"].([]any)
	for _, t := range tools {
		m, _ := t.(map[string]any)
		if fn, ok := m["function"].(map[string]any); ok { // Chat Completions' {"type": "function", "function": {...}}
			m = fn
		}
		if name, ok := m["name"].(string); ok {
			iv.Tools = append(iv.Tools, name)
		}
	}
}

// firstAnswers finds, for each call, the first answer stored after it, as
// the session's answers stream past in any order: in memory of the calls,
// not of the answers (the audit page once kept every answer's time).
type firstAnswers struct {
	at    []time.Time // the calls' times, sorted, each once
	first []time.Time // [j]: the earliest answer after at[j] and not after at[j+1]; zero if none
}

func newFirstAnswers(invs []invView) *firstAnswers {
	fa := &firstAnswers{}
	for _, iv := range invs {
		t, _ := time.Parse(time.RFC3339Nano, iv.Time)
		fa.at = append(fa.at, t)
	}
	sort.Slice(fa.at, func(i, j int) bool { return fa.at[i].Before(fa.at[j]) })
	fa.at = slices.CompactFunc(fa.at, time.Time.Equal)
	fa.first = make([]time.Time, len(fa.at))
	return fa
}

func (fa *firstAnswers) add(t time.Time) {
	j := sort.Search(len(fa.at), func(j int) bool { return !fa.at[j].Before(t) }) - 1 // at[j] < t <= at[j+1]
	if j >= 0 && (fa.first[j].IsZero() || t.Before(fa.first[j])) {
		fa.first[j] = t
	}
}

// settle makes first[j] the earliest answer after at[j], once every answer
// went past: the buckets are in time order, so it is the first non-empty
// one from j on.
func (fa *firstAnswers) settle() {
	for j := len(fa.first) - 2; j >= 0; j-- {
		if fa.first[j].IsZero() {
			fa.first[j] = fa.first[j+1]
		}
	}
}

// after is the first answer stored after t, one of the calls' times
// (after settle).
func (fa *firstAnswers) after(t time.Time) (time.Time, bool) {
	j := sort.Search(len(fa.at), func(j int) bool { return !fa.at[j].Before(t) })
	if j == len(fa.at) || fa.first[j].IsZero() {
		return time.Time{}, false
	}
	return fa.first[j], true
}

// waterfall places each call on the session's time line: its start from
// the first call, and its duration, as recorded (latency_ms) or, when not,
// up to the first answer stored after it and before the next call.
func waterfall(invs []invView, answers *firstAnswers) {
	if len(invs) == 0 {
		return
	}
	at := make([]time.Time, len(invs))
	for i := range invs {
		at[i], _ = time.Parse(time.RFC3339Nano, invs[i].Time)
	}
	answers.settle()
	var span float64
	for i := range invs {
		iv := &invs[i]
		iv.Start = float64(at[i].Sub(at[0]).Microseconds()) / 1000
		iv.Dur = iv.Latency
		if !iv.Measured {
			if first, ok := answers.after(at[i]); ok && (i+1 == len(invs) || first.Before(at[i+1])) {
				iv.Dur = float64(first.Sub(at[i]).Microseconds()) / 1000
			}
		}
		span = max(span, iv.Start+iv.Dur)
	}
	if span <= 0 {
		span = 1
	}
	for i := range invs {
		invs[i].BarX = int(invs[i].Start / span * 1000)
		invs[i].BarW = max(4, int(invs[i].Dur/span*1000))
	}
}

// diff compares what two agent calls saw, message by message (a message is
// its role and stored time): added in b, dropped from a (a compaction), and
// cut in b but whole in a.
func diff(a, b invView) diffView {
	d := diffView{A: a.N, B: b.N}
	inA := map[string]auditMsg{}
	for _, m := range a.history {
		inA[m.Role+" "+m.Time] = m
	}
	inB := map[string]bool{}
	for _, m := range b.history {
		k := m.Role + " " + m.Time
		inB[k] = true
		old, ok := inA[k]
		switch {
		case !ok:
			d.Added = append(d.Added, m)
		case m.Compressed && !old.Compressed:
			d.Cut = append(d.Cut, m)
		default:
			d.Kept++
		}
	}
	for _, m := range a.history {
		if !inB[m.Role+" "+m.Time] {
			d.Dropped = append(d.Dropped, m)
		}
	}
	return d
}

// --- template functions ---

var funcs = template.FuncMap{
	"num":   thousands,
	"when":  readableTime,
	"text":  inert,
	"name":  nameHTML,
	"pct":   func(a, b int) int { return a * 100 / max(b, 1) },
	"add":   func(a, b int) int { return a + b },
	"short": func(s string) string { return shortUUID(s) },
	"plural": func(n int, noun string) string {
		return thousands(n) + " " + noun + map[bool]string{true: "", false: "s"}[n == 1]
	},
	"ms": millis,
}

// millis is a duration in milliseconds as people read it: "812 ms",
// "3.4 s", "2 min 5 s"; "" for none.
func millis(ms float64) string {
	switch {
	case ms <= 0:
		return ""
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	}
	return fmt.Sprintf("%d min %d s", int(ms/60_000), int(ms/1000)%60)
}

// thousands writes an integer with a comma between groups of three digits.
func thousands(v any) string {
	var s string
	switch n := v.(type) {
	case int:
		s = strconv.Itoa(n)
	case int64:
		s = strconv.FormatInt(n, 10)
	case int32:
		s = strconv.FormatInt(int64(n), 10)
	default:
		return fmt.Sprint(v)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// readableTime is a stored timestamp to the second, in UTC, for the page
// without JavaScript; app.js shows it in the reader's zone (the full value
// stays in the element's datetime and title).
func readableTime(ts string) string {
	t, err := models.ParseTimestamp(ts)
	if err != nil {
		return ts
	}
	return t.UTC().Format("2006-01-02 15:04:05") + " UTC"
}

func shortUUID(s string) string {
	if len(s) > 13 {
		return s[:8] + "…"
	}
	return s
}

// Part is a piece of stored text as the viewer draws it: plain text, or
// one bidirectional control shown as its code point (Ctl, "U+202E").
type Part struct {
	Text string `json:"t,omitempty"`
	Ctl  string `json:"c,omitempty"`
}

// inertParts is the one rendering of stored text: every bidirectional
// control becomes a visible code point, so an override cannot reorder what
// is drawn around it. Pages draw the parts with inert; Expand gets them
// from /ui/lookup and builds the same nodes (static/app.js).
func inertParts(s string) []Part { return partsBy(s, isBidi) }

// partsBy splits s at the characters shown is true for, each a Part of its
// own (Ctl: its code point).
func partsBy(s string, shown func(rune) bool) []Part {
	var out []Part
	start := 0
	for i, r := range s {
		if shown(r) {
			if i > start {
				out = append(out, Part{Text: s[start:i]})
			}
			out = append(out, Part{Ctl: fmt.Sprintf("U+%04X", r)})
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) || len(out) == 0 {
		out = append(out, Part{Text: s[start:]})
	}
	return out
}

func isBidi(r rune) bool { return strings.ContainsRune(bidiControls, r) }

// isInvisible is what a name must not hide: bidirectional
// controls, and every format character (zero-width space and joiners,
// word joiner, soft hyphen, BOM, ...) and blank filler, which draw nothing
// and make two names that look alike differ. Content keeps them (an emoji
// sequence needs its joiners); names show each as its code point.
func isInvisible(r rune) bool {
	switch r {
	case '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return isBidi(r) || unicode.Is(unicode.Cf, r)
}

// nameHTML is a session, agent, tool or user name as HTML: text escaped,
// invisible characters drawn as their code points.
func nameHTML(s string) template.HTML {
	return partsHTML(partsBy(s, isInvisible), "invisible character")
}

// inert is inertParts as HTML: text escaped, controls in a span.
func inert(s string) template.HTML { return partsHTML(inertParts(s), "bidirectional control") }

func partsHTML(parts []Part, title string) template.HTML {
	var b strings.Builder
	for _, p := range parts {
		if p.Ctl != "" {
			fmt.Fprintf(&b, `<span class="ctl" title="%s">%s</span>`, title, p.Ctl)
			continue
		}
		b.WriteString(template.HTMLEscapeString(p.Text))
	}
	return template.HTML(b.String()) //nolint:gosec // escaped above; only our span is added
}

// escapeBidi writes the bidirectional controls of a JSON text as \u
// escapes: the same JSON, and no raw control anywhere in the page.
func escapeBidi(js string) string {
	if !strings.ContainsAny(js, bidiControls) {
		return js
	}
	var b strings.Builder
	for _, r := range js {
		if strings.ContainsRune(bidiControls, r) {
			fmt.Fprintf(&b, "\\u%04x", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

// callMsg is one message of an agent call as the model got it, with the
// stored row it came from.
type callMsg struct {
	N                              int
	Role, Time                     string
	Length                         int
	Compressed                     bool
	Head, Marker, Tail             string
	Key, Content                   string
	ToolName, ToolCallID, ToolArgs string
	Row                            int    // the row's index in the session (all rows), -1 if not found
	RowLink                        string // deep link to the row on the session page
	Failure                        string // the failed step it records (convert.Failure on its role and text), or ""
	// Calls are an assistant message's stored tool calls (tool_calls), as
	// "name(arguments)"; CallStored: a tool result's call is one of them,
	// stored with the answer that made it, not rebuilt from the result.
	Calls      []string
	CallStored bool
}

// callPage shows one recorded agent call in full: what it was asked, every
// message the model got (cut ones with their hint, expandable), the tool
// calls paired with their returns, and the pydantic-ai JSON remstore sent.
func (v *Viewer) callPage(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	ac, err := v.auditCalls(r, q, key)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 0 || n >= len(ac.invs) {
		v.fail(w, r, http.StatusNotFound, fmt.Sprintf("no call %q: this session has %d recorded calls", r.PathValue("n"), len(ac.invs)))
		return nil
	}
	iv := ac.invs[n]
	var raws []map[string]any
	var usage usageTotals
	msgs := make([]callMsg, len(iv.history))
	stored := map[string]bool{} // the call ids of the answers' stored tool calls
	for i, m := range iv.history {
		cm := callMsg{N: i, Role: m.Role, Time: m.Time, Length: m.Length, Compressed: m.Compressed, Content: m.Content, Row: -1,
			Failure: convert.Failure(models.HistoryMessage{Role: models.Role(m.Role), Content: m.Content})}
		if k, ok := m.raw["_entity_key"].(string); ok && m.Compressed {
			cm.Key = k
			cm.Head, cm.Marker, cm.Tail = splitCut(m.Content, k)
		}
		cm.ToolName, _ = m.raw["tool_name"].(string)
		cm.ToolCallID, _ = m.raw["tool_call_id"].(string)
		if a, ok := m.raw["tool_arguments"]; ok && a != nil {
			if b, err := json.Marshal(a); err == nil {
				cm.ToolArgs = pretty(b)
			}
		}
		if cm.Role == string(models.RoleTool) {
			cm.Content = prettyText(cm.Content)
			cm.CallStored = cm.ToolCallID != "" && stored[cm.ToolCallID]
		}
		calls, _ := m.raw["tool_calls"].([]any)
		for _, c := range calls {
			cmap, _ := c.(map[string]any)
			id, _ := cmap["id"].(string)
			name, _ := cmap["name"].(string)
			args, _ := cmap["arguments"].(string)
			stored[id] = id != ""
			cm.Calls = append(cm.Calls, name+"("+args+")")
		}
		if ref, ok := ac.rows[m.Role+" "+m.Time]; ok {
			// What the rows this call saw had cost when they were made.
			usage.add(ref.in, ref.out, ref.model)
			cm.Row = ref.idx
			cm.RowLink = fmt.Sprintf("/ui/sessions/%s?all=1&from=%d#m%d", ac.info.ID, ref.idx, ref.idx)
		}
		msgs[i] = cm
		raws = append(raws, m.raw)
	}
	// The pydantic-ai messages remstore built from this history.
	var pyJSON string
	var pv []pydanticMsg
	if b, err := json.Marshal(raws); err == nil {
		if hist, err := models.DecodeHistory(b); err == nil {
			pv = pydanticView(hist)
			pyJSON = escapeBidi(pretty(convert.Marshal(convert.Convert(hist, convert.Options{}))))
		} else {
			pyJSON = "the recorded history does not decode: " + err.Error()
		}
	}
	d := v.base(q, fmt.Sprintf("Call %d of %s", n, ac.info.Name))
	d["Info"], d["Call"], d["Messages"], d["Pydantic"], d["PydanticJSON"], d["Calls"] = ac.info, iv, msgs, pv, pyJSON, len(ac.invs)
	d["Usage"] = usage
	if n > 0 {
		d["PrevCall"] = fmt.Sprintf("/ui/sessions/%s/audit/%d", ac.info.ID, n-1)
	}
	if n+1 < len(ac.invs) {
		d["NextCall"] = fmt.Sprintf("/ui/sessions/%s/audit/%d", ac.info.ID, n+1)
	}
	v.render(w, http.StatusOK, "call", d)
	return nil
}

// searchPage searches the signed-in user's sessions.
func (v *Viewer) searchPage(w http.ResponseWriter, r *http.Request, q *request) error {
	qs := r.URL.Query()
	d := v.base(q, "Search")
	o := sessionstore.SearchOptions{Query: qs.Get("q"), In: qs.Get("in"), Role: qs.Get("role"), Tool: qs.Get("tool")}
	d["Q"], d["In"], d["Kinds"], d["Role"], d["Roles"], d["Tool"] = o.Query, o.In, sessionstore.SearchKinds(), o.Role, canonicalRoles(), o.Tool
	if off := qs.Get("offset"); off != "" {
		// As the API: a page that is not a number is a 400, not the first.
		var err error
		if o.Offset, err = strconv.Atoi(off); err != nil {
			d["Error"] = `field "offset": must be an integer`
			v.render(w, http.StatusBadRequest, "search", d)
			return nil
		}
	}
	if strings.TrimSpace(o.Query) == "" {
		v.render(w, http.StatusOK, "search", d)
		return nil
	}
	// The index catches up with everyone's writes once the budget is
	// taken, uncharged (serve's API does the same).
	var indexing bool
	var catchUpErr error
	catchUp := func(ctx context.Context) error {
		indexing, catchUpErr = q.store.CatchUpSearch(ctx, &o)
		return catchUpErr
	}
	ctx, end := r.Context(), func() {}
	if v.o.BeginSearch != nil {
		var err error
		if ctx, end, err = v.o.BeginSearch(ctx, q.si.budget, catchUp); catchUpErr != nil {
			return catchUpErr
		} else if err != nil {
			// A refusal that says when (the API's budget does) says it in
			// the header too, as the API's 429 does, for clients that wait.
			var busy interface{ RetryAfter() time.Duration }
			if errors.As(err, &busy) {
				w.Header().Set("Retry-After", strconv.Itoa(int((busy.RetryAfter()+time.Second-1)/time.Second)))
			}
			d["Error"] = err.Error()
			v.render(w, http.StatusTooManyRequests, "search", d)
			return nil
		}
	} else if err := catchUp(ctx); err != nil {
		return err
	}
	res, err := q.store.SearchPage(ctx, o)
	res.Indexing = res.Indexing || indexing
	hits := res.Hits
	end()
	if err != nil {
		if c := sessionstore.Classify(err); c.Kind == sessionstore.BadInput {
			d["Error"] = err.Error()
			v.render(w, http.StatusBadRequest, "search", d)
			return nil
		}
		return err
	}
	type hitView struct {
		sessionstore.SearchHit
		Link string
	}
	views := make([]hitView, len(hits))
	for i, h := range hits {
		link := "/ui/sessions/" + h.SessionID.String()
		switch {
		case h.Timestamp != "": // the page finds the message by its time, compacted or not
			link += "?ts=" + url.QueryEscape(h.Timestamp)
		case h.Index >= 0:
			link += fmt.Sprintf("?all=1&from=%d#m%d", h.Index, h.Index)
		}
		views[i] = hitView{h, link}
	}
	d["Hits"], d["Searched"], d["Indexing"] = views, true, res.Indexing
	// Pages of the same search (issue 41: it stopped at 50, saying "50
	// results"): where this one starts, and the links either side.
	limit := o.Limit
	if limit == 0 {
		limit = sessionstore.DefaultSearchLimit
	}
	at := func(offset int) string {
		u := url.Values{"q": {o.Query}, "in": {qs.Get("in")}, "offset": {strconv.Itoa(offset)}}
		if o.Role != "" {
			u.Set("role", o.Role)
		}
		if o.Tool != "" {
			u.Set("tool", o.Tool)
		}
		return "/ui/search?" + u.Encode()
	}
	d["From"], d["To"] = o.Offset+1, o.Offset+len(hits)
	if o.Offset > 0 {
		d["Newer"] = at(max(0, o.Offset-limit))
	}
	if res.More {
		d["Older"] = at(o.Offset + limit)
	}
	v.render(w, http.StatusOK, "search", d)
	return nil
}

// canonicalRoles are the roles a search offers: models.Roles without the
// spellings that normalize to another (function, model).
func canonicalRoles() []string {
	var out []string
	for _, r := range models.Roles() {
		if r.Normalize() == r {
			out = append(out, string(r))
		}
	}
	return out
}

package viewer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
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
	Calls                          []callView // typed tool calls of an assistant message (--extras)
	Compaction                     bool
	ReplacesBefore                 int
}

type callView struct{ ID, Name, Args string }

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

func (v *Viewer) sessionPage(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	info, hist, err := q.store.GetSession(r.Context(), key, sessionstore.LoadOptions{Extras: true})
	if err != nil {
		return err
	}
	t := v.o.TruncateLength
	view := r.URL.Query().Get("view")
	from, _ := strconv.Atoi(r.URL.Query().Get("from"))
	var pv []pydanticMsg
	total := len(hist)
	if view == "pydantic" {
		pv = pydanticView(hist)
		total = len(pv)
	}
	pg := pageOf(from, total, "/ui/sessions/"+info.ID.String(), view)
	var msgs []msgView
	stored, sent := 0, 0
	for i, m := range hist {
		n := utf8.RuneCountInString(m.Content)
		length := n
		if m.Compressed {
			length = m.OriginalLength
		}
		stored, sent = stored+length, sent+n
		if view == "pydantic" || i < pg.From || i >= pg.To {
			continue
		}
		mv := msgView{Index: i, Role: string(m.Role), Content: m.Content, Sent: n, Length: length}
		if m.Timestamp != nil {
			mv.Time = *m.Timestamp
		}
		if m.Compressed {
			mv.Compressed, mv.Key = true, m.EntityKey
			mv.Head, mv.Marker, mv.Tail = splitCut(m.Content, m.EntityKey)
		}
		mv.ToolCallID, mv.ToolName = m.ToolCallID, m.ToolName
		if len(m.ToolArguments) > 0 {
			mv.ToolArgs = pretty(m.ToolArguments)
		}
		for _, f := range m.Extra {
			switch f.Key {
			case "tool_calls":
				mv.Calls = toolCalls(f.Value)
			case "compaction":
				var c struct {
					ReplacesBefore int `json:"replaces_before"`
				}
				if json.Unmarshal(f.Value, &c) == nil {
					mv.Compaction, mv.ReplacesBefore = true, c.ReplacesBefore
				}
			}
		}
		mv.Bar = lengthBar(mv.Length, t)
		mv.Bar.Over = mv.Compressed // only what was cut is drawn as cut
		msgs = append(msgs, mv)
	}
	d := v.base(q, "Session "+info.Name)
	d["Info"], d["Key"], d["Messages"], d["T"], d["TwoT"], d["Count"] = info, key, msgs, t, 2*t, len(hist)
	d["Stored"], d["SentChars"], d["SizeBar"], d["Page"] = stored, sent, sizeBar(stored, sent), pg
	d["View"] = "history"
	if view == "pydantic" {
		d["View"] = "pydantic"
		d["Pydantic"] = pv[pg.From:pg.To]
	}
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
		if view == "pydantic" {
			u += "&view=pydantic"
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
// compressor wrote ("\n\n... [Message truncated - ...] ...\n\n").
func splitCut(content, key string) (head, marker, tail string) {
	const open, closing = "\n\n... [Message truncated - ", "] ...\n\n"
	i := strings.Index(content, open)
	if key != "" {
		i = strings.Index(content, open+"REM LOOKUP "+key)
	}
	if i < 0 {
		return content, "", ""
	}
	j := strings.Index(content[i:], closing)
	if j < 0 {
		return content, "", ""
	}
	j += i + len(closing)
	return content[:i], strings.TrimSpace(content[i:j]), content[j:]
}

func toolCalls(raw json.RawMessage) []callView {
	var calls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(raw, &calls) != nil {
		return []callView{{Args: string(raw)}}
	}
	out := make([]callView, len(calls))
	for i, c := range calls {
		name, args := c.Function.Name, c.Function.Arguments
		if name == "" {
			name, args = c.Name, c.Args
		}
		out[i] = callView{ID: c.ID, Name: name, Args: pretty(args)}
	}
	return out
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
	return b.String()
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
		out = append(out, pm)
	}
	return out
}

// --- audit ---

type invView struct {
	N        int
	Time     string
	Agent    string
	Prompt   string
	Raw      int
	Pydantic int
	File     string
	history  []auditMsg
	Cut      int
	Chars    int // characters of the history it saw
}

type auditMsg struct {
	Role, Time, Content string
	Compressed          bool
	Length              int
}

type diffView struct {
	A, B                int
	Added, Dropped, Cut []auditMsg
	Kept                int
}

// maxAuditFiles bounds the files one audit page reads.
const maxAuditFiles = 10000

// auditPage shows the dumps of the session's agent calls. Dump files are
// named by the session id the caller gave (which two users may share, and
// which a rename does not follow) and carry no user: an invocation is shown
// only when every message it saw is a message of this session, matched by
// role and stored timestamp (to the microsecond). A call that saw no history
// cannot be attributed and is not shown; nor is a call of another session in
// the same file (counted as hidden).
func (v *Viewer) auditPage(w http.ResponseWriter, r *http.Request, q *request) error {
	key := r.PathValue("id")
	// Only each message's role and time are compared, so the load may cut
	// long answers on the server; compaction is ignored so that what a
	// summary replaced still counts as this session's.
	info, hist, err := q.store.GetSession(r.Context(), key, sessionstore.LoadOptions{IgnoreCompaction: true})
	if err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, m := range hist {
		if m.Timestamp != nil {
			mine[string(m.Role)+" "+*m.Timestamp] = true
		}
	}
	var invs []invView
	hidden := 0
	var readErr string
	if v.o.AuditDir != "" && len(hist) > 0 {
		// Only files that mention one of this session's message times are
		// parsed: the first one is in every dump that saw any history.
		first := []byte(*hist[0].Timestamp)
		files, err := audit.Scan(v.o.AuditDir, func(b []byte) bool { return bytes.Contains(b, first) }, maxAuditFiles)
		if err != nil {
			readErr = err.Error()
		}
		for _, f := range files {
			for _, inv := range f.Invocations {
				iv := invOf(inv, audit.FileName(f.SessionID))
				if !attributable(iv.history, mine) {
					hidden++
					continue
				}
				iv.N = len(invs)
				invs = append(invs, iv)
			}
		}
		sort.SliceStable(invs, func(i, j int) bool { return invs[i].Time < invs[j].Time })
		for i := range invs {
			invs[i].N = i
		}
	}
	d := v.base(q, "Audit of "+info.Name)
	d["Info"], d["Key"], d["Invocations"], d["Hidden"], d["AuditDir"], d["ReadError"] = info, key, invs, hidden, v.o.AuditDir, readErr
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
	iv := invView{Time: str("timestamp"), Agent: str("agent_name"), Prompt: str("prompt"), Raw: num("raw_history_count"),
		Pydantic: num("pydantic_messages_count"), File: file}
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
		if am.Compressed {
			iv.Cut++
		}
		iv.Chars += am.Length
		iv.history = append(iv.history, am)
	}
	return iv
}

func attributable(h []auditMsg, mine map[string]bool) bool {
	if len(h) == 0 {
		return false
	}
	for _, m := range h {
		if !mine[m.Role+" "+m.Time] {
			return false
		}
	}
	return true
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
	"text":  inert,
	"pct":   func(a, b int) int { return a * 100 / max(b, 1) },
	"add":   func(a, b int) int { return a + b },
	"short": func(s string) string { return shortUUID(s) },
	"plural": func(n int, noun string) string {
		return strconv.Itoa(n) + " " + noun + map[bool]string{true: "", false: "s"}[n == 1]
	},
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
func inertParts(s string) []Part {
	if !strings.ContainsAny(s, bidiControls) {
		return []Part{{Text: s}}
	}
	var out []Part
	start := 0
	for i, r := range s {
		if strings.ContainsRune(bidiControls, r) {
			if i > start {
				out = append(out, Part{Text: s[start:i]})
			}
			out = append(out, Part{Ctl: fmt.Sprintf("U+%04X", r)})
			start = i + utf8.RuneLen(r)
		}
	}
	if start < len(s) {
		out = append(out, Part{Text: s[start:]})
	}
	return out
}

// inert is inertParts as HTML: text escaped, controls in a span.
func inert(s string) template.HTML {
	var b strings.Builder
	for _, p := range inertParts(s) {
		if p.Ctl != "" {
			fmt.Fprintf(&b, `<span class="ctl" title="bidirectional control">%s</span>`, p.Ctl)
			continue
		}
		b.WriteString(template.HTMLEscapeString(p.Text))
	}
	return template.HTML(b.String()) //nolint:gosec // escaped above; only our span is added
}

const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

package viewer

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/remstore/remstore/models"
)

// diff by hand: call a saw m0..m3 whole; call b (after a compaction) saw a
// summary, m2 whole, m3 cut and a new m4. So: added summary and m4, cut m3,
// dropped m0 and m1, m2 unchanged.
func TestDiff(t *testing.T) {
	t.Parallel()
	m := func(role, ts string, cut bool) auditMsg { return auditMsg{Role: role, Time: ts, Compressed: cut} }
	a := invView{N: 0, history: []auditMsg{m("user", "t0", false), m("assistant", "t1", false), m("user", "t2", false), m("assistant", "t3", false)}}
	b := invView{N: 1, history: []auditMsg{m("system", "s", false), m("user", "t2", false), m("assistant", "t3", true), m("assistant", "t4", false)}}
	d := diff(a, b)
	names := func(ms []auditMsg) string {
		var out []string
		for _, x := range ms {
			out = append(out, x.Time)
		}
		return strings.Join(out, ",")
	}
	if names(d.Added) != "s,t4" || names(d.Cut) != "t3" || names(d.Dropped) != "t0,t1" || d.Kept != 1 {
		t.Errorf("diff: added %s, cut %s, dropped %s, kept %d", names(d.Added), names(d.Cut), names(d.Dropped), d.Kept)
	}
}

// The waterfall's durations, from the answers streamed past in any order
// and kept per call, are those of the answers all kept and sorted (as the
// audit page did before it stopped keeping every answer's time): the
// first answer after each call, when it comes before the next call.
func TestFirstAnswersAsSorted(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return base.Add(time.Duration(n) * time.Second) }
	for round := range 500 {
		var invs []invView
		for range 1 + rng.IntN(6) {
			invs = append(invs, invView{Time: models.FormatTimestamp(at(rng.IntN(20)))})
		}
		sort.SliceStable(invs, func(i, j int) bool { return invs[i].Time < invs[j].Time })
		var answers []time.Time
		for range rng.IntN(8) {
			answers = append(answers, at(rng.IntN(24)))
		}
		fa := newFirstAnswers(invs)
		for _, a := range answers {
			fa.add(a)
		}
		got := slices.Clone(invs)
		waterfall(got, fa)
		// The old way: every answer kept, sorted, searched.
		sort.Slice(answers, func(i, j int) bool { return answers[i].Before(answers[j]) })
		for i := range invs {
			ti, _ := time.Parse(time.RFC3339Nano, invs[i].Time)
			want := 0.0
			j := sort.Search(len(answers), func(j int) bool { return answers[j].After(ti) })
			if j < len(answers) {
				next := time.Time{}
				if i+1 < len(invs) {
					next, _ = time.Parse(time.RFC3339Nano, invs[i+1].Time)
				}
				if i+1 == len(invs) || answers[j].Before(next) {
					want = float64(answers[j].Sub(ti).Microseconds()) / 1000
				}
			}
			if got[i].Dur != want {
				t.Fatalf("round %d, call %d at %s: duration %v, want %v (calls %v, answers %v)", round, i, invs[i].Time, got[i].Dur, want, invs, answers)
			}
		}
	}
}

// Bidirectional controls become visible code points; everything is escaped.
func TestInert(t *testing.T) {
	t.Parallel()
	got := string(inert("a\u202Eb<i>&\u2066"))
	want := `a<span class="ctl" title="bidirectional control">U+202E</span>b&lt;i&gt;&amp;<span class="ctl" title="bidirectional control">U+2066</span>`
	if got != want {
		t.Errorf("inert = %s\nwant   %s", got, want)
	}
}

// The one rendering of stored text, checked by hand: each bidirectional
// control is a visible code point, the text around it untouched.
func TestInertParts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []Part
	}{
		{"plain <b>", []Part{{Text: "plain <b>"}}},
		{"invoice_\u202egpj.exe", []Part{{Text: "invoice_"}, {Ctl: "U+202E"}, {Text: "gpj.exe"}}},
		{"\u2066\u2069", []Part{{Ctl: "U+2066"}, {Ctl: "U+2069"}}},
		{"é\u200f", []Part{{Text: "é"}, {Ctl: "U+200F"}}},
	} {
		if got := inertParts(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%q: %+v, want %+v", c.in, got, c.want)
		}
	}
	if got := inert("a<\u202e>"); got != `a&lt;<span class="ctl" title="bidirectional control">U+202E</span>&gt;` {
		t.Errorf("inert: %s", got)
	}
}

// Names show what draws nothing (issue 41): zero-width characters, joiners,
// soft hyphens, BOMs and blank fillers, beside the bidirectional controls;
// content keeps its joiners (an emoji sequence needs them).
func TestNamesShowInvisibleCharacters(t *testing.T) {
	for in, want := range map[string]string{
		"alice":               "alice",
		"ali\u200bce":         `ali<span class="ctl" title="invisible character">U+200B</span>ce`,
		"adm\u00adin":         `adm<span class="ctl" title="invisible character">U+00AD</span>in`,
		"\ufeffplanner\u2060": `<span class="ctl" title="invisible character">U+FEFF</span>planner<span class="ctl" title="invisible character">U+2060</span>`,
		"x\u3164":             `x<span class="ctl" title="invisible character">U+3164</span>`,
		"evil\u202e<b>":       `evil<span class="ctl" title="invisible character">U+202E</span>&lt;b&gt;`,
		"caf\u00e9 \u200dbar": `café <span class="ctl" title="invisible character">U+200D</span>bar`,
	} {
		if got := string(nameHTML(in)); got != want {
			t.Errorf("nameHTML(%q) = %s\nwant %s", in, got, want)
		}
	}
	if got := string(inert("👨\u200d👩")); got != "👨\u200d👩" {
		t.Errorf("content lost its joiner: %q", got)
	}
}

// Hand-computed: separators, literal <, > and & in JSON (an escaped
// backslash before u003c stays), pretty tool returns.
func TestFinish(t *testing.T) {
	for in, want := range map[any]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", int64(-1048576): "-1,048,576", int32(12345): "12,345"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`{"q":"\u003cb\u003e \u0026"}`: `{"q":"<b> &"}`,
		`{"q":"\\u003cb"}`:             `{"q":"\\u003cb"}`,
		`{"q":"\u00e9"}`:               `{"q":"\u00e9"}`,
		`"\u003C"`:                     `"<"`,
	} {
		if got := string(literalHTML([]byte(in))); got != want {
			t.Errorf("literalHTML(%s) = %s, want %s", in, got, want)
		}
	}
	if got := prettyText(`{"flights":[1,2]}`); got != "{\n  \"flights\": [\n    1,\n    2\n  ]\n}" {
		t.Errorf("prettyText: %q", got)
	}
	for _, s := range []string{"plain text", "{not json", "[1,", ""} {
		if got := prettyText(s); got != s {
			t.Errorf("prettyText(%q) = %q", s, got)
		}
	}
	if got := escapeBidi(`{"n":"a` + "\u202e" + `b"}`); got != `{"n":"a\u202eb"}` {
		t.Errorf("escapeBidi: %s", got)
	}
}

// A long message that is not cut is drawn folded (issue 41): its first 400
// code points, the whole text behind "show all"; a cut answer and a short
// message are drawn as before.
func TestLongMessagesFold(t *testing.T) {
	long := strings.Repeat("é", 2500)
	ts := "2026-01-01T00:00:00+00:00"
	user := messageView(3, models.HistoryMessage{Role: "user", Content: long, Timestamp: &ts}, 200, 0, false, 0, 0, "", "")
	if user.Preview != strings.Repeat("é", 400) || user.Content != long {
		t.Errorf("a long user message: preview %d code points", utf8.RuneCountInString(user.Preview))
	}
	tool := messageView(4, models.HistoryMessage{Role: "tool", Content: `{"rows":"` + long + `"}`, ToolCallID: "c", ToolName: "q", Timestamp: &ts}, 200, 0, false, 0, 0, "", "")
	if tool.Preview == "" {
		t.Error("a long tool return is not folded")
	}
	short := messageView(5, models.HistoryMessage{Role: "user", Content: "hi", Timestamp: &ts}, 200, 0, false, 0, 0, "", "")
	cut := messageView(6, models.HistoryMessage{Role: "assistant", Content: "head … tail", Compressed: true, OriginalLength: 5000, EntityKey: "k", Timestamp: &ts}, 200, 0, false, 0, 0, "", "")
	if short.Preview != "" || cut.Preview != "" {
		t.Errorf("folded: short %q, cut %q", short.Preview, cut.Preview)
	}
}

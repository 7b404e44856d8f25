package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// nestSummary is a summarizer whose text holds every text it covers, so a
// load's history names each message it stands for.
func nestSummary(_ context.Context, msgs []models.HistoryMessage) (string, error) {
	parts := make([]string, len(msgs))
	for i, m := range msgs {
		parts[i] = m.Content
	}
	return "S[" + strings.Join(parts, " ") + "]", nil
}

// A compaction covers the summary before it (it is the first message a load
// shows), so that summary is never shown again: compacting twice with the
// same KeepLast gave [S2, m3, m4, m5, S1], the older summary back after the
// kept messages (its row comes after them), the last message of the history
// a stale summary and what it covers in the history twice. Every way a load
// reads (one statement, by position, last n, since) shows exactly the last
// summary and what it keeps.
func TestCompactAgainHidesTheSummaryItCovers(t *testing.T) {
	t.Parallel()
	type step struct {
		add  int // messages to store first
		keep int // then compact keeping this many
	}
	cases := []struct {
		name  string
		steps []step
		want  []string
	}{
		{"same keep twice", []step{{6, 3}, {0, 3}}, []string{"S[S[m0 m1 m2]]", "m3", "m4", "m5"}},
		{"cut inside the kept part", []step{{6, 3}, {2, 4}}, []string{"S[S[m0 m1 m2] m3]", "m4", "m5", "m6", "m7"}},
		{"three times", []step{{6, 3}, {0, 3}, {1, 2}}, []string{"S[S[S[m0 m1 m2]] m3 m4]", "m5", "m6"}},
		{"keep nothing, then again", []step{{3, 0}, {2, 1}}, []string{"S[S[m0 m1 m2] m3]", "m4"}},
		{"past the previous summary", []step{{4, 2}, {3, 1}}, []string{"S[S[m0 m1] m2 m3 m4 m5]", "m6"}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, _ := b.open(t, nil)
			s := mk("A")
			for _, c := range cases {
				key := strings.ReplaceAll(c.name, " ", "-")
				n := 0
				for _, st := range c.steps {
					for range st.add {
						store(t, s, key, msg("user", fmt.Sprintf("m%d", n)))
						n++
					}
					if _, err := s.Compact(ctx, key, nestSummary, sessionstore.CompactOptions{KeepLast: st.keep}); err != nil {
						t.Fatalf("%s: compact keeping %d: %v", c.name, st.keep, err)
					}
				}
				all, err := s.Load(ctx, key, sessionstore.LoadOptions{IgnoreCompaction: true})
				if err != nil {
					t.Fatal(err)
				}
				since, err := models.ParseTimestamp(*all[0].Timestamp)
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range []struct {
					name string
					s    *sessionstore.Store
					o    sessionstore.LoadOptions
					want []string
				}{
					{"one statement", s, sessionstore.LoadOptions{NoCompress: true}, c.want},
					{"extras", s, sessionstore.LoadOptions{NoCompress: true, Extras: true}, c.want},
					{"by position", sessionstore.ByPosition(s), sessionstore.LoadOptions{NoCompress: true}, c.want},
					{"last 2", s, sessionstore.LoadOptions{NoCompress: true, LastN: 2}, c.want[len(c.want)-2:]},
					{"last 2 by position", sessionstore.ByPosition(s), sessionstore.LoadOptions{NoCompress: true, LastN: 2}, c.want[len(c.want)-2:]},
					{"since", s, sessionstore.LoadOptions{NoCompress: true, Since: since.Add(-1)}, c.want},
				} {
					h, err := l.s.Load(ctx, key, l.o)
					if err != nil {
						t.Fatalf("%s, %s: %v", c.name, l.name, err)
					}
					got := make([]string, len(h))
					for i, m := range h {
						got[i] = m.Content
					}
					if fmt.Sprint(got) != fmt.Sprint(l.want) {
						t.Errorf("%s, %s load: %q, want %q", c.name, l.name, got, l.want)
					}
				}
			}
		})
	}
}

// Compactions racing a writer and loads: every load, whole or of the last
// few, stands for the messages stored so far, each once and in order (the
// summaries' texts name what they cover). Before summaries covered by a
// later one were left out, a load repeated what they covered.
func TestCompactionsRacingAppendsRepeatNothing(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, _ := b.open(t, nil)
			s := mk("A")
			const key, total = "racing", 60
			var wg sync.WaitGroup
			done := make(chan struct{})
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done)
				for i := range total {
					if _, err := s.Store(ctx, key, []models.HistoryMessage{msg("user", fmt.Sprintf("m%d", i))}, sessionstore.StoreOptions{}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			running := func() bool {
				select {
				case <-done:
					return false
				default:
					return true
				}
			}
			for c := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; running(); r++ {
						_, err := s.Compact(ctx, key, nestSummary, sessionstore.CompactOptions{KeepLast: (r + c) % 4})
						if err != nil && !errors.Is(err, sessionstore.ErrNothingToCompact) && !errors.Is(err, sessionstore.ErrNotFound) {
							t.Error(err)
							return
						}
					}
				}()
			}
			loads := atomic.Int64{}
			check := func(h []models.HistoryMessage, lastN int) bool {
				var toks []string
				for _, m := range h {
					toks = append(toks, messageToken.FindAllString(m.Content, -1)...)
				}
				for i := 1; i < len(toks); i++ {
					var a, b int
					fmt.Sscanf(toks[i-1], "m%d", &a)
					fmt.Sscanf(toks[i], "m%d", &b)
					if b != a+1 || (lastN == 0 && toks[0] != "m0") {
						t.Errorf("a load (last %d) stands for %v", lastN, toks)
						return false
					}
				}
				return true
			}
			for l := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; running(); r++ {
						lastN := (r * l) % 4
						h, err := s.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true, LastN: lastN})
						if err != nil {
							t.Error(err)
							return
						}
						loads.Add(1)
						if !check(h, lastN) {
							return
						}
					}
				}()
			}
			wg.Wait()
			h, err := s.Load(ctx, key, sessionstore.LoadOptions{NoCompress: true})
			if err != nil {
				t.Fatal(err)
			}
			if check(h, 0) {
				if n := len(messageToken.FindAllString(historyJSON(t, h), -1)); n != total {
					t.Errorf("the last load stands for %d messages of %d", n, total)
				}
			}
			t.Logf("%d loads beside the writer", loads.Load())
		})
	}
}

var messageToken = regexp.MustCompile(`\bm\d+\b`)

// A load since a time keeps tool pairs whole: a tool result whose call was
// created before Since is left out with it. On a compacted session the
// summary, handed out first, let such a result through (it opened the
// window as the call would have): [S, tool result, a2].
func TestSinceOnACompactedSessionKeepsToolPairsWhole(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, _ := b.open(t, nil)
			s := mk("A")
			store(t, s, "since", msg("user", "u0"), msg("assistant", "a0"), msg("user", "u1"), msg("assistant", "a1 calls"))
			store(t, s, "since", models.HistoryMessage{Role: "tool", Content: `{"r":1}`, ToolCallID: "c1", ToolName: "t"}, msg("assistant", "a2"))
			all, err := s.Load(ctx, "since", sessionstore.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			call, err := models.ParseTimestamp(*all[3].Timestamp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Compact(ctx, "since", nestSummary, sessionstore.CompactOptions{KeepLast: 4}); err != nil {
				t.Fatal(err)
			}
			for _, st := range []*sessionstore.Store{s, sessionstore.ByPosition(s)} {
				for _, o := range []sessionstore.LoadOptions{{Since: call}, {Since: call, Extras: true}, {Since: call.Add(-time.Microsecond)}} {
					h, err := st.Load(ctx, "since", o)
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, m := range h {
						got = append(got, m.Content)
					}
					want := []string{"S[u0 a0]", "a2"}
					if o.Since.Before(call) {
						want = []string{"S[u0 a0]", "a1 calls", `{"r":1}`, "a2"}
					}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("since %s: %q, want %q", o.Since, got, want)
					}
				}
			}
		})
	}
}

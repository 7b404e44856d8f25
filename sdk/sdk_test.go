package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/remstore/remstore"
	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/agenttest"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk"
	"github.com/remstore/remstore/sessionstore"
)

// A turn with one bad message is refused whole, naming the message and the
// part, on every backend; what was stored before stays as it was.
func TestBadTurnIsNotHalfStored(t *testing.T) {
	ctx := context.Background()
	good := models.HistoryMessage{Role: models.RoleAssistant, Content: "calling",
		ToolCalls: []models.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}}
	for _, b := range agenttest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, agenttest.Large)
			if _, err := st.Append(ctx, "s", []models.HistoryMessage{{Role: models.RoleUser, Content: "hi"}}); err != nil {
				t.Fatal(err)
			}
			for name, bad := range map[string]models.HistoryMessage{
				"arguments not JSON": {Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c2", Name: "f", Arguments: "{a:"}}},
				"invalid UTF-8":      {Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c2", Name: "f\xff", Arguments: "{}"}}},
				"calls on a user":    {Role: models.RoleUser, Content: "x", ToolCalls: []models.ToolCall{{ID: "c2", Name: "f"}}},
			} {
				_, err := st.Append(ctx, "s", []models.HistoryMessage{good, sdk.ToolResult(good.ToolCalls[0], "ok"), bad})
				if err == nil || !strings.Contains(err.Error(), "message 2") || !strings.Contains(err.Error(), "tool_calls") {
					t.Fatalf("%s: %v", name, err)
				}
			}
			hh, err := st.Load(ctx, "s")
			h := hh.Messages
			if err != nil || len(h) != 1 {
				t.Fatalf("after refused turns: %d messages, %v", len(h), err)
			}
		})
	}
}

func TestResultForNeedsItsCall(t *testing.T) {
	answer := models.HistoryMessage{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c1", Name: "f", Arguments: `{"a":1}`}}}
	m, err := sdk.ResultFor(answer, "c1", "done")
	if err != nil || m.ToolCallID != "c1" || m.ToolName != "f" || string(m.ToolArguments) != `{"a":1}` {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := sdk.ResultFor(answer, "c9", "x"); err == nil || !strings.Contains(err.Error(), `"c9"`) {
		t.Fatalf("orphan result: %v", err)
	}
}

// A stored call whose result is gone (a pop) is not sent: every provider
// refuses a call without its result.
func TestUnansweredCallIsNotSent(t *testing.T) {
	h := []models.HistoryMessage{{Role: models.RoleUser, Content: "q"},
		{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c1", Name: "f"}, {ID: "c2", Name: "g"}}},
		{Role: models.RoleTool, Content: "r", ToolCallID: "c1", ToolName: "f"}}
	var calls []string
	err := sdk.Walk(h, func(_ int, _ *models.HistoryMessage, t *convert.Turn) error {
		for _, c := range callsOf(t) {
			calls = append(calls, c.ID)
		}
		return nil
	})
	if err != nil || len(calls) != 1 || calls[0] != "c1" {
		t.Fatalf("%v %v", calls, err)
	}
}

func callsOf(t *convert.Turn) []models.ToolCall {
	if t == nil {
		return nil
	}
	return t.Calls
}

// Two turns racing on one session, on every backend: the second turn runs
// whole while the first waits for its model; the first's prompt and answer
// are then refused together with ErrMoved, so the session holds the second
// turn alone: the loser stores nothing.
func TestRacingTurnsDoNotInterleave(t *testing.T) {
	ctx := context.Background()
	for _, b := range agenttest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, agenttest.Large)
			answer := func(text string) sdk.Asker {
				return func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
					return models.HistoryMessage{Role: models.RoleAssistant, Content: text}, nil
				}
			}
			var second error
			first := func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
				_, second = sdk.RunTurn(ctx, st, "race", "second prompt", answer("second answer"), nil)
				return answer("first answer")(ctx, h)
			}
			_, err := sdk.RunTurn(ctx, st, "race", "first prompt", first, nil)
			if second != nil || !errors.Is(err, sdk.ErrMoved) {
				t.Fatalf("first turn: %v; second turn: %v", err, second)
			}
			hh, err := st.Load(ctx, "race")
			h := hh.Messages
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range h {
				got = append(got, m.Content)
			}
			if strings.Join(got, "|") != "second prompt|second answer" {
				t.Fatalf("history %q", got)
			}
		})
	}
}

// RunTurn records each model call at the time it began, through the library
// and through serve alike (issue 54: every call was recorded at
// 0001-01-01T00:00:00+00:00): the time lies between the turn's start and
// the moment the model was asked, in UTC, and not after the answer, which
// a slow model puts 200 ms later.
func TestRunTurnRecordsWhenTheCallBegan(t *testing.T) {
	ctx := context.Background()
	for _, via := range []string{"library", "serve"} {
		t.Run(via, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("DEBUG_AUDIT_SESSION", "1")
			t.Setenv("DEBUG_AUDIT_DIR", dir)
			var st sdk.Store
			if via == "library" {
				s, err := sessionstore.New(dbtest.NewSQLite(t), sessionstore.Options{UserID: "alice"})
				if err != nil {
					t.Fatal(err)
				}
				st = remstore.Library(s)
			} else {
				st = agenttest.NewServeClient(t, dbtest.NewSQLite(t), 0, func(o *httpapi.Options) { o.AuditEnabled, o.AuditDir = true, dir }).Agent()
			}
			var asked, answered time.Time
			slow := func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
				asked = time.Now()
				time.Sleep(200 * time.Millisecond)
				answered = time.Now()
				return models.HistoryMessage{Role: models.RoleAssistant, Content: "late"}, nil
			}
			before := time.Now()
			if _, err := sdk.RunTurn(ctx, st, "when", "what time is it?", slow, nil); err != nil {
				t.Fatal(err)
			}
			dumps, _ := filepath.Glob(filepath.Join(dir, "*.yaml")) // the one session's, named by its UUID
			if len(dumps) != 1 {
				t.Fatalf("dumps: %v", dumps)
			}
			f, err := audit.Read(dir, strings.TrimSuffix(filepath.Base(dumps[0]), ".yaml"))
			if err != nil || len(f.Invocations) != 1 {
				t.Fatalf("dump: %v %+v", err, f)
			}
			ts, _ := f.Invocations[0]["timestamp"].(string)
			at, err := models.ParseTimestamp(ts)
			if err != nil || !strings.HasSuffix(ts, "+00:00") || at.Before(before.Truncate(time.Microsecond)) || at.After(asked) {
				t.Errorf("timestamp %q; want the call's start in UTC, from %s to %s (the answer came at %s)", ts,
					before.UTC().Format(time.RFC3339Nano), asked.UTC().Format(time.RFC3339Nano), answered.UTC().Format(time.RFC3339Nano))
			}
		})
	}
}

// Racing turns, eight rounds of two on one session, on every backend:
// both load before either appends (the asks meet at a barrier), so one
// wins each round and the other stores nothing and says ErrMoved; the
// session ends holding each winner's prompt and answer, in order, and no
// loser's message.
func TestRacingTurnsLoserStoresNothing(t *testing.T) {
	ctx := context.Background()
	for _, b := range agenttest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, agenttest.Large)
			var want []string
			for round := range 8 {
				var barrier sync.WaitGroup
				barrier.Add(2)
				errs := make([]error, 2)
				var wg sync.WaitGroup
				for i := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						ask := func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
							barrier.Done()
							barrier.Wait()
							return models.HistoryMessage{Role: models.RoleAssistant, Content: fmt.Sprintf("answer %d.%d", round, i)}, nil
						}
						_, errs[i] = sdk.RunTurn(ctx, st, "race8", fmt.Sprintf("prompt %d.%d", round, i), ask, nil)
					}()
				}
				wg.Wait()
				winner := -1
				for i, err := range errs {
					switch {
					case err == nil && winner == -1:
						winner = i
					case !errors.Is(err, sdk.ErrMoved):
						t.Fatalf("round %d: turn %d: %v (the other: %v)", round, i, err, errs[1-i])
					}
				}
				if winner == -1 {
					t.Fatalf("round %d: no turn stored: %v", round, errs)
				}
				want = append(want, fmt.Sprintf("prompt %d.%d", round, winner), fmt.Sprintf("answer %d.%d", round, winner))
			}
			h, err := st.Load(ctx, "race8")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range h.Messages {
				got = append(got, m.Content)
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("history\n%q\nwant\n%q", got, want)
			}
		})
	}
}

// A turn that loses a race after a tool round stores nothing either: its
// first model call asks for a tool, the other turn runs whole during its
// second, and its prompt, call and result are refused with its answer.
func TestRacingTurnLosesAfterAToolRound(t *testing.T) {
	ctx := context.Background()
	for _, b := range agenttest.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			st := b.New(t, agenttest.Large)
			var second error
			calls := 0
			first := func(ctx context.Context, h []models.HistoryMessage) (models.HistoryMessage, error) {
				if calls++; calls == 1 {
					return models.HistoryMessage{Role: models.RoleAssistant, ToolCalls: []models.ToolCall{{ID: "c1", Name: "weather", Arguments: `{}`}}}, nil
				}
				_, second = sdk.RunTurn(ctx, st, "race2", "second prompt", func(context.Context, []models.HistoryMessage) (models.HistoryMessage, error) {
					return models.HistoryMessage{Role: models.RoleAssistant, Content: "second answer"}, nil
				}, nil)
				return models.HistoryMessage{Role: models.RoleAssistant, Content: "first answer"}, nil
			}
			tool := func(_ context.Context, c models.ToolCall) (models.HistoryMessage, error) {
				return sdk.ToolResult(c, "21"), nil
			}
			_, err := sdk.RunTurn(ctx, st, "race2", "first prompt", first, tool)
			if second != nil || !errors.Is(err, sdk.ErrMoved) {
				t.Fatalf("first turn: %v; second turn: %v", err, second)
			}
			h, err := st.Load(ctx, "race2")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range h.Messages {
				got = append(got, m.Content)
			}
			if strings.Join(got, "|") != "second prompt|second answer" {
				t.Fatalf("history %q", got)
			}
		})
	}
}

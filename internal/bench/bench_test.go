package bench_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/bench"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// BenchmarkWorkloads runs every workload beside its floor on real
// PostgreSQL. REMSTORE_BENCH_QUICK=1 (CI, -benchtime=1x) uses small sizes.
func BenchmarkWorkloads(b *testing.B) {
	ctx := context.Background()
	env, err := bench.Open(ctx, dbtest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	sizes := bench.Full
	if os.Getenv("REMSTORE_BENCH_QUICK") == "1" {
		sizes = bench.Quick
	}
	ws, err := env.Workloads(ctx, sizes)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		name := strings.ReplaceAll(w.Name, " ", "_")
		for _, v := range []struct {
			kind string
			op   bench.Op
		}{{"remstore", w.Run}, {"floor", w.Floor}} {
			if v.op == nil {
				continue
			}
			b.Run(name+"/"+v.kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if w.Setup != nil && v.kind == "remstore" {
						b.StopTimer()
						w.Setup()
						b.StartTimer()
					}
					if err := v.op(ctx); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(w.Rows*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

// BenchmarkScale runs the session-size sweep, the concurrency workload and
// the HTTP workload on real PostgreSQL (remstore bench prints them beside
// the peer). Each concurrency run checks what it stored: every acknowledged
// turn there, positions gap-free.
func BenchmarkScale(b *testing.B) {
	ctx := context.Background()
	env, err := bench.Open(ctx, dbtest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	sizes, d := bench.Full, 5*time.Second
	if os.Getenv("REMSTORE_BENCH_QUICK") == "1" {
		sizes, d = bench.Quick, 300*time.Millisecond
	}
	sweep, err := env.SweepWorkloads(ctx, sizes.Sweep)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range sweep {
		b.Run(strings.ReplaceAll(w.Name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
				if err := w.Run(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, c := range bench.ConcurrencyCases {
		r, err := env.Concurrency(ctx, c.Writers, c.Shared, d)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.ReplaceAll(r.Name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(r.TurnsPerSec, "turns/s")
			b.ReportMetric(r.P99MS, "p99-ms")
		})
	}
	hs, err := env.HTTP(ctx, 8, d)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range hs {
		b.Run("http_"+strings.ReplaceAll(h.Name, " ", "_"), func(b *testing.B) {
			for b.Loop() {
			}
			b.ReportMetric(h.HTTPPerSec, "http-ops/s")
			b.ReportMetric(100*h.Ratio, "pct-of-library")
			b.ReportMetric(100*h.ServeOverBare, "pct-of-bare-http")
		})
	}
}

// A SQLite file that holds sessions is refused (bench would leave its own
// beside them); a new file, or one migrated and empty, is used.
func TestOpenRefusesAUsedSQLiteFile(t *testing.T) {
	ctx := context.Background()
	path := dbtest.NewSQLiteURL(t)
	env, err := bench.Open(ctx, path) // a new file
	if err != nil {
		t.Fatal(err)
	}
	env.Close()
	env, err = bench.Open(ctx, path) // migrated, no session yet
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Store.Store(ctx, "mine", bench.Turn(0), sessionstore.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Close()
	if env, err = bench.Open(ctx, path); err == nil || !strings.Contains(err.Error(), "holds sessions already") {
		if env != nil {
			env.Close()
		}
		t.Fatalf("a file with a session: %v, want it refused", err)
	}
}

// The workloads run once on SQLite too (no floors there).
func TestWorkloadsSQLite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env, err := bench.Open(ctx, dbtest.NewSQLiteURL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	ws, err := env.Workloads(ctx, bench.Sizes{Load: []int{10, 1000}, Lookups: []int{100}, Import: 200})
	if err != nil {
		t.Fatal(err)
	}
	sweep, err := env.SweepWorkloads(ctx, []int{20, 300})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range append(ws, sweep...) {
		r, err := bench.Measure(ctx, w, 2)
		if err != nil {
			t.Fatal(err)
		}
		// No floor on SQLite but those of remstore's own or in memory.
		own := w.Name == "Go SDK turn, 200 rows" || strings.HasSuffix(w.Name, ": load as pydantic-ai") ||
			strings.HasSuffix(w.FloorDef, ", taking turns") // a sweep's larger session beside its smallest
		if r.MedianMS <= 0 || (w.Floor != nil) != own {
			t.Fatalf("%+v", r)
		}
	}
	for _, c := range bench.ConcurrencyCases[:2] {
		if r, err := env.Concurrency(ctx, c.Writers, true, 100*time.Millisecond); err != nil || r.Turns == 0 {
			t.Fatalf("concurrency %+v: %v", r, err)
		}
	}
	if hs, err := env.HTTP(ctx, 2, 200*time.Millisecond); err != nil || len(hs) != 2 || hs[0].HTTPPerSec <= 0 || hs[0].BarePerSec <= 0 ||
		hs[1].ResponseLength < 100_000 {
		t.Fatalf("http %+v: %v", hs, err)
	}
}

// The agent sessions are what their shapes say: a system row first where
// there is a system prompt, then per turn the user's prompt, in the turns
// with a call the call and its return (paired), and an answer of 1,000 to
// 3,000 characters; decoded as a pydantic-ai store decodes them.
func TestAgentSession(t *testing.T) {
	for _, c := range []struct {
		shape         bench.AgentShape
		rows, calls   int
		system        bool
		answers, tool int
	}{{bench.RealAgent, 201, 20, true, 80, 20}, {bench.LightAgent, 200, 50, false, 50, 50}} {
		in, err := convert.DecodePydanticAI(bytes.NewReader(bench.AgentSession(c.shape)))
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Messages) != c.rows {
			t.Fatalf("%d rows, want %d", len(in.Messages), c.rows)
		}
		msgs := in.Messages
		if c.system {
			if msgs[0].Role != models.RoleSystem || msgs[0].Content != c.shape.System {
				t.Fatalf("first row %+v, want the system prompt", msgs[0])
			}
			msgs = msgs[1:]
		}
		answers, tools, calls := 0, 0, 0
		for i, m := range msgs {
			switch {
			case m.Role == models.RoleTool:
				tools++
				if msgs[i-1].Role != models.RoleAssistant || len(msgs[i-1].ToolCalls) != 1 || msgs[i-1].ToolCalls[0].ID != m.ToolCallID {
					t.Fatalf("row %d: a return without its call before it: %+v / %+v", i, msgs[i-1], m)
				}
			case m.Role == models.RoleAssistant && len(m.ToolCalls) > 0:
				calls++
			case m.Role == models.RoleAssistant:
				answers++
				if n := utf8.RuneCountInString(m.Content); n < 1000 || n > 3000 {
					t.Fatalf("answer %d: %d characters", i, n)
				}
				if msgs[i-1].Role != models.RoleUser && msgs[i-1].Role != models.RoleTool {
					t.Fatalf("answer %d after a %s row", i, msgs[i-1].Role)
				}
			case m.Role != models.RoleUser:
				t.Fatalf("row %d: role %s", i, m.Role)
			}
		}
		if answers != c.answers || tools != c.tool || calls != c.calls {
			t.Fatalf("%d answers, %d calls, %d returns; want %d, %d, %d", answers, calls, tools, c.answers, c.calls, c.tool)
		}
	}
}

// BenchmarkAgent runs the agent workloads alone on real PostgreSQL (what
// go test -cpuprofile looks at for the pydantic-ai load and the SDK turn).
func BenchmarkAgent(b *testing.B) {
	ctx := context.Background()
	env, err := bench.Open(ctx, dbtest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	ws, err := env.AgentWorkloads(ctx, bench.Quick)
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range ws {
		for _, v := range []struct {
			kind string
			op   bench.Op
		}{{"remstore", w.Run}, {"floor", w.Floor}} {
			if v.op == nil {
				continue
			}
			b.Run(strings.ReplaceAll(w.Name, " ", "_")+"/"+v.kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if err := v.op(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkAgentConvert is the conversion alone of the real-shaped agent
// session's pydantic-ai load: the rows loaded once (sources, compressed),
// then written as pydantic-ai JSON again and again; beside it the plain
// history's loaded rows walked, for scale.
func BenchmarkAgentConvert(b *testing.B) {
	ctx := context.Background()
	env, err := bench.Open(ctx, dbtest.PostgresURL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer env.Close()
	if _, err := env.AgentWorkloads(ctx, bench.Quick); err != nil {
		b.Fatal(err)
	}
	h, err := env.Store.Load(ctx, "agent-session-201", sessionstore.LoadOptions{Sources: true})
	if err != nil || len(h) != 201 {
		b.Fatalf("%d rows: %v", len(h), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := convert.WriteStream(io.Discard, convert.Options{SystemPrompt: "S"}, func(fn func(models.HistoryMessage) error) error {
			for _, m := range h {
				if err := fn(m); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

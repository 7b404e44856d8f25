package bench_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/bench"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
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
		if r.MedianMS <= 0 || w.Floor != nil {
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

// The agent session is what its doc says: 4 rows a turn (user, a call,
// its return, an answer of 1,000 to 3,000 characters), decoded as a
// pydantic-ai store decodes it.
func TestAgentSession(t *testing.T) {
	in, err := convert.DecodePydanticAI(bytes.NewReader(bench.AgentSession(50)))
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Messages) != 200 {
		t.Fatalf("%d rows, want 200", len(in.Messages))
	}
	for i, m := range in.Messages {
		want := []models.Role{models.RoleUser, models.RoleAssistant, models.RoleTool, models.RoleAssistant}[i%4]
		if m.Role != want {
			t.Fatalf("row %d: role %s, want %s", i, m.Role, want)
		}
		if n := utf8.RuneCountInString(m.Content); i%4 == 3 && (n < 1000 || n > 3000) {
			t.Fatalf("answer %d: %d characters", i, n)
		}
	}
	if len(in.Messages[1].ToolCalls) != 1 || in.Messages[2].ToolCallID != in.Messages[1].ToolCalls[0].ID {
		t.Fatalf("the call and its return do not pair: %+v / %+v", in.Messages[1].ToolCalls, in.Messages[2])
	}
}

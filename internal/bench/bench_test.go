package bench_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/bench"
	"github.com/remstore/remstore/internal/dbtest"
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
	for _, w := range ws {
		r, err := bench.Measure(ctx, w, 2)
		if err != nil {
			t.Fatal(err)
		}
		if r.MedianMS <= 0 || w.Floor != nil {
			t.Fatalf("%+v", r)
		}
	}
}

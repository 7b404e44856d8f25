package repository_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
)

// Figures, not assertions: run with
// go test ./repository -run X -bench . -benchtime 2s (make test starts the server).

func turn(i int) []models.HistoryMessage {
	long := strings.Repeat("answer text ", 60)
	return []models.HistoryMessage{
		msg("user", fmt.Sprintf("question %d", i)),
		msg("assistant", long),
		{Role: "tool", Content: `{"ok":true}`, ToolCallID: fmt.Sprintf("c%d", i), ToolName: "search", ToolArguments: []byte(`{"q":"x"}`)},
		msg("assistant", "done"),
	}
}

func BenchmarkStoreTurn(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(d.Name, func(b *testing.B) {
			s := newStore(b, d.New(b), "A", 200)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := s.StoreMessages(ctx, "bench", turn(i), ""); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(4*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, d := range dbtest.Dialects {
		for _, n := range []int{10, 1000} {
			b.Run(fmt.Sprintf("%s/%d", d.Name, n), func(b *testing.B) {
				s := newStore(b, d.New(b), "A", 200)
				ctx := context.Background()
				var all []models.HistoryMessage
				for i := 0; len(all) < n; i++ {
					all = append(all, turn(i)...)
				}
				if _, err := s.StoreMessages(ctx, "bench", all[:n], ""); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					h, err := s.Load(ctx, "bench", repository.LoadOptions{})
					if err != nil || len(h) != n {
						b.Fatal(len(h), err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	for _, d := range dbtest.Dialects {
		b.Run(d.Name, func(b *testing.B) {
			s := newStore(b, d.New(b), "A", 200)
			ctx := context.Background()
			var keys []string
			for i := range 250 {
				res, err := s.StoreMessages(ctx, fmt.Sprintf("bench-%d", i%10), turn(i), "")
				if err != nil {
					b.Fatal(err)
				}
				keys = append(keys, res.Keys[1])
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := s.Lookup(ctx, keys[i%len(keys)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

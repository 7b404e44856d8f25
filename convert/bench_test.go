package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remstore/remstore/models"
)

func history(n int) []models.HistoryMessage {
	ts := "2024-01-15T10:30:00.123456+00:00"
	var out []models.HistoryMessage
	for i := 0; len(out) < n; i++ {
		out = append(out,
			models.HistoryMessage{Role: "user", Content: fmt.Sprintf("question %d", i), Timestamp: &ts},
			models.HistoryMessage{Role: "assistant", Content: strings.Repeat("answer text ", 50), Timestamp: &ts},
			models.HistoryMessage{Role: "tool", Content: `{"status":"success","results":[1,2,3]}`, ToolCallID: fmt.Sprint("c", i), ToolName: "search", ToolArguments: []byte(`{"q":"trip"}`), Timestamp: &ts},
			models.HistoryMessage{Role: "assistant", Content: "Done.", Timestamp: &ts})
	}
	return out[:n]
}

func BenchmarkJSON(b *testing.B) {
	for _, n := range []int{10, 1000} {
		h := history(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := JSON(h, Options{SystemPrompt: "S"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

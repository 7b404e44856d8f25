package sdk_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sdk/remanthropic"
	"github.com/remstore/remstore/sdk/remgenai"
	"github.com/remstore/remstore/sdk/remlangchain"
	"github.com/remstore/remstore/sdk/remopenai"
)

// FuzzAdapters: whatever history decodes, no adapter panics, an error
// names a message, and in every Chat Completions request each call is
// answered by the tool messages right after it, in order.
func FuzzAdapters(f *testing.F) {
	files, _ := filepath.Glob(fixtures.Path("histories", "*.json"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := models.DecodeHistory(data)
		if err != nil {
			return
		}
		named := func(err error) {
			if err == nil {
				return
			}
			if _, ok := models.AsFieldError(err); !ok {
				t.Fatalf("an error that names nothing: %v", err)
			}
		}
		msgs, err := remopenai.Messages(h, remopenai.Options{System: "S"})
		named(err)
		for i, m := range msgs {
			if m.OfAssistant == nil {
				continue
			}
			for k, c := range m.OfAssistant.ToolCalls {
				if i+1+k >= len(msgs) || msgs[i+1+k].OfTool == nil || msgs[i+1+k].OfTool.ToolCallID != c.OfFunction.ID {
					t.Fatalf("call %s of message %d is not answered right after it", c.OfFunction.ID, i)
				}
			}
		}
		_, err = remopenai.InputItems(h, remopenai.Options{})
		named(err)
		_, _, err = remanthropic.Messages(h, remanthropic.Options{})
		named(err)
		_, _, err = remgenai.Contents(h, remgenai.Options{})
		named(err)
		_, err = remlangchain.MessageContents(h, remlangchain.Options{})
		named(err)
	})
}

package convert

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/models"
)

// A Walker fed message by message hands over what Walk hands over for the
// whole history: the same positions, messages, calls (with their
// arguments) and results, for every fixture history.
func TestWalkerIsWalk(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob(fixtures.Path("histories", "*.json"))
	if len(files) < 20 {
		t.Fatalf("only %d history fixtures", len(files))
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := models.DecodeHistory(in)
		if err != nil {
			t.Fatal(err)
		}
		trace := func(out *[]string) func(int, *models.HistoryMessage, *Turn) error {
			return func(i int, m *models.HistoryMessage, turn *Turn) error {
				s := strconv.Itoa(i) + " " + string(m.Role) + " " + m.Content
				if turn != nil {
					for _, c := range turn.Calls {
						s += " | call " + c.ID + " " + c.Name + " " + string(ArgsObject(c))
					}
					for _, r := range turn.Results {
						s += " | result " + strconv.Itoa(r.Index) + " " + r.CallID + " " + r.Content
						if h[r.Index].Content != r.Message.Content {
							t.Errorf("result %d is not the history's message %d", r.Index, r.Index)
						}
					}
				}
				*out = append(*out, s)
				return nil
			}
		}
		var want, got []string
		if err := Walk(h, trace(&want)); err != nil {
			t.Fatal(err)
		}
		w := NewWalker(trace(&got))
		for _, m := range h {
			if err := w.Add(m); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Walker\n%q\nWalk\n%q", filepath.Base(f), got, want)
		}
	}
}

package convert

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/remstore/remstore/models"
)

// pydanticFixtures are message lists written by real pydantic-ai agents
// (interop/gen_pydantic_fixtures.py, 1.42 and 2.x): the oracle, by file name.
func pydanticFixtures(t testing.TB) map[string][]byte {
	paths, err := filepath.Glob("../fixtures/pydantic-ai/*.json")
	if err != nil || len(paths) < 4 {
		t.Fatalf("fixtures/pydantic-ai/*.json: %d files, %v", len(paths), err)
	}
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = b
	}
	return out
}

// fixtureRows are the rows a pydantic-ai store makes of every fixture, by
// file name: each carries its stored source (SourceKey).
func fixtureRows(t testing.TB) map[string][]models.HistoryMessage {
	out := map[string][]models.HistoryMessage{}
	for name, data := range pydanticFixtures(t) {
		in, err := DecodePydanticAI(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = in.Messages
	}
	return out
}

package sessionstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/dbtest"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/sessionstore"
)

func asJSONValue(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// TestPydanticAIRoundTrip: what real pydantic-ai agents produced
// (fixtures/pydantic-ai), stored a turn at a time and loaded back in
// pydantic-ai format, is what they produced, field for field, when T is
// large enough that nothing is cut; with a small T only the long answers
// differ, each cut with a key that looks up its full text.
func TestPydanticAIRoundTrip(t *testing.T) {
	t.Parallel()
	paths, _ := filepath.Glob("../fixtures/pydantic-ai/*.json")
	if len(paths) == 0 {
		t.Fatal("no fixtures/pydantic-ai/*.json")
	}
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		for _, p := range paths {
			in, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []json.RawMessage
			if err := json.Unmarshal(in, &msgs); err != nil {
				t.Fatal(err)
			}
			big, small := newStore(t, db, "pai", 100_000), newStore(t, db, "pai", 5)
			key := filepath.Base(p)
			// One store call per message: a turn's new_messages() may split anywhere.
			for i, m := range msgs {
				ing, err := convert.DecodePydanticAI(bytes.NewReader(append(append([]byte("["), m...), ']')))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := big.Store(ctx, key, ing.Messages, sessionstore.StoreOptions{}); err != nil {
					t.Fatalf("%s message %d: %v", key, i, ing.Locate(err))
				}
			}
			load := func(s *sessionstore.Store) ([]models.HistoryMessage, []byte) {
				h, err := s.Load(ctx, key, sessionstore.LoadOptions{Sources: true})
				if err != nil {
					t.Fatal(err)
				}
				return h, convert.Marshal(convert.Convert(h, convert.Options{}))
			}
			_, out := load(big)
			if !reflect.DeepEqual(asJSONValue(t, in), asJSONValue(t, out)) {
				t.Fatalf("%s: loaded back differs\nstored %s\nloaded %s", key, in, out)
			}
			// A plain load shows the peer's keys only.
			plain, err := big.Load(ctx, key, sessionstore.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range plain {
				if len(m.Extra) != 0 {
					t.Fatalf("plain load carries %v", m.Extra)
				}
			}
			hist, cut := load(small)
			var got []map[string]any
			if err := json.Unmarshal(cut, &got); err != nil {
				t.Fatal(err)
			}
			compressed := 0
			for _, m := range hist {
				if !m.Compressed {
					continue
				}
				compressed++
				full, err := small.Lookup(ctx, m.EntityKey)
				if err != nil || len([]rune(full)) != m.OriginalLength {
					t.Fatalf("lookup %s: %v (%d code points, want %d)", m.EntityKey, err, len([]rune(full)), m.OriginalLength)
				}
				if !strings.Contains(string(cut), strings.TrimSuffix(strings.TrimPrefix(string(mustJSON(m.Content)), `"`), `"`)) {
					t.Fatalf("the cut text of %s is not in the pydantic-ai output", m.EntityKey)
				}
			}
			if strings.Contains(key, "tools") && compressed == 0 {
				t.Fatalf("%s: nothing was cut at T=5", key)
			}
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestPopAndClear: the last message comes off (soft-deleted, returned in
// full), keys of the rest do not move, another tenant can do nothing, and
// clear removes every live message but keeps the session.
func TestPopAndClear(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *repository.DB) {
		ctx := context.Background()
		a, b := newStore(t, db, "alice", 5), newStore(t, db, "bob", 5)
		long := strings.Repeat("long answer ", 3)
		withItem := msg("assistant", "from the SDK")
		withItem.Extra = []models.Field{{Key: sessionstore.AgentsSourceKey, Value: []byte(`{"type":"message","role":"assistant","content":"from the SDK"}`)}}
		res, err := a.Store(ctx, "s", []models.HistoryMessage{msg("user", "q"), msg("assistant", long), msg("user", "q2"), withItem}, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok, err := b.PopMessage(ctx, "s"); !errors.Is(err, sessionstore.ErrNotFound) || ok {
			t.Fatalf("bob pops alice's session %q: %v", "s", err)
		}
		if _, err := b.ClearMessages(ctx, "s"); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Fatalf("bob clears: %v", err)
		}
		m, ok, err := a.PopMessage(ctx, "s")
		if err != nil || !ok || m.Content != "from the SDK" || m.ID != res.IDs[3].String() {
			t.Fatalf("pop: %+v %v %v", m, ok, err)
		}
		if v, ok := m.ExtraString("x"); ok || v != "" {
			t.Fatal("unexpected extra")
		}
		if len(m.Extra) != 1 || m.Extra[0].Key != sessionstore.AgentsSourceKey {
			t.Fatalf("popped message extras %v", m.Extra)
		}
		m, _, _ = a.PopMessage(ctx, "s")
		if m.Content != "q2" {
			t.Fatalf("second pop %q", m.Content)
		}
		h, _ := a.Load(ctx, "s", sessionstore.LoadOptions{})
		if len(h) != 2 || h[1].EntityKey != res.Keys[1] {
			t.Fatalf("after two pops: %+v", h)
		}
		// A store after a pop continues; stored keys never move.
		res2, err := a.Store(ctx, "s", []models.HistoryMessage{msg("assistant", long+"2")}, sessionstore.StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if full, err := a.Lookup(ctx, res.Keys[1]); err != nil || full != long {
			t.Fatalf("old key after pops: %q %v", full, err)
		}
		if full, err := a.Lookup(ctx, res2.Keys[0]); err != nil || full != long+"2" {
			t.Fatalf("new key: %q %v", full, err)
		}
		n, err := a.ClearMessages(ctx, "s")
		if err != nil || n != 3 {
			t.Fatalf("clear: %d %v", n, err)
		}
		if h, _ := a.Load(ctx, "s", sessionstore.LoadOptions{}); len(h) != 0 {
			t.Fatalf("after clear: %d messages", len(h))
		}
		if _, ok, err := a.PopMessage(ctx, "s"); ok || err != nil {
			t.Fatalf("pop of an empty session: %v %v", ok, err)
		}
		if _, _, err := a.GetSession(ctx, "s", sessionstore.LoadOptions{}); err != nil {
			t.Fatalf("the session is gone after clear: %v", err)
		}
		var rows int
		if err := db.NewRaw("SELECT count(*) FROM messages WHERE deleted_at IS NOT NULL").Scan(ctx, &rows); err != nil || rows != 5 {
			t.Fatalf("soft-deleted rows kept: %d %v", rows, err)
		}
		if _, _, err := a.PopMessage(ctx, "never"); !errors.Is(err, sessionstore.ErrNotFound) {
			t.Fatalf("pop of an unknown session: %v", err)
		}
	})
}

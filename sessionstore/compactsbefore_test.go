package sessionstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/remstore/remstore/sessionstore"
)

// A summary row's compacts_before is whatever its writer put there (an
// import restores metadata as exported; the Python service and SQL write
// any JSON): no value may panic a compaction, hang a fork or make a session
// unloadable. A negative position covers nothing, as 0 does: on PostgreSQL
// -1 was "OFFSET must not be negative" on every load, a compaction panicked
// (index out of range [-1]) and a fork of 10^18 counted to it, holding the
// session's transaction.
func TestOddCompactsBeforeIsHarmless(t *testing.T) {
	t.Parallel()
	cases := []struct {
		value string // the JSON written as metadata.compacts_before
		want  []string
	}{
		{`3`, []string{"S[m0 m1 m2]", "m3", "m4", "m5"}},
		{`0`, []string{"S[m0 m1 m2]", "m0", "m1", "m2", "m3", "m4", "m5"}},
		{`-1`, []string{"S[m0 m1 m2]", "m0", "m1", "m2", "m3", "m4", "m5"}},
		{`-1000`, []string{"S[m0 m1 m2]", "m0", "m1", "m2", "m3", "m4", "m5"}},
		{`1000000000000000000`, []string{"S[m0 m1 m2]"}},
		{`"x"`, nil},
		{`null`, nil},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			mk, db := b.open(t, nil)
			s := mk("A")
			pg := b.name != "sqlite"
			for i, c := range cases {
				key := fmt.Sprintf("odd-%d", i)
				for j := range 6 {
					store(t, s, key, msg("user", fmt.Sprintf("m%d", j)))
				}
				if _, err := s.Compact(ctx, key, nestSummary, sessionstore.CompactOptions{KeepLast: 3}); err != nil {
					t.Fatal(err)
				}
				sid, err := s.SessionUUID(key)
				if err != nil {
					t.Fatal(err)
				}
				q := "UPDATE messages SET metadata = json_set(metadata, '$.compacts_before', json(?)) WHERE session_id = ? AND json_extract(metadata, '$.compaction') = 1"
				if pg {
					q = "UPDATE messages SET metadata = jsonb_set(metadata, '{compacts_before}', CAST(? AS jsonb)) WHERE session_id = ? AND metadata->>'compaction' = 'true'"
				}
				if _, err := db.ExecContext(ctx, q, c.value, sid); err != nil {
					t.Fatal(err)
				}
				var loads []string
				for _, l := range []struct {
					s *sessionstore.Store
					o sessionstore.LoadOptions
				}{{s, sessionstore.LoadOptions{NoCompress: true}}, {sessionstore.ByPosition(s), sessionstore.LoadOptions{NoCompress: true}},
					{s, sessionstore.LoadOptions{NoCompress: true, LastN: 100}}} {
					h, err := l.s.Load(ctx, key, l.o)
					if err != nil {
						t.Fatalf("compacts_before %s: load %+v: %v", c.value, l.o, err)
					}
					got := make([]string, len(h))
					for k, m := range h {
						got[k] = m.Content
					}
					loads = append(loads, fmt.Sprintf("%q", got))
				}
				if loads[1] != loads[0] || loads[2] != loads[0] {
					t.Errorf("compacts_before %s: the loads differ: %v", c.value, loads)
				}
				if c.want != nil && loads[0] != fmt.Sprintf("%q", c.want) {
					t.Errorf("compacts_before %s: load %s, want %q", c.value, loads[0], c.want)
				}
				fctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				if _, err := s.Fork(fctx, key, sessionstore.ForkOptions{}); err != nil {
					t.Errorf("compacts_before %s: fork: %v", c.value, err)
				}
				cancel()
				store(t, s, key, msg("user", "m6"))
				// (Nothing to compact where the summary covers every row.)
				if _, err := s.Compact(ctx, key, nestSummary, sessionstore.CompactOptions{KeepLast: 1}); err != nil && !errors.Is(err, sessionstore.ErrNothingToCompact) {
					t.Errorf("compacts_before %s: compact again: %v", c.value, err)
				}
			}
		})
	}
}

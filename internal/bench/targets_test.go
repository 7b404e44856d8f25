package bench

import (
	"strings"
	"testing"
)

// The targets table from hand-made figures: each row's measure and verdict
// worked out by hand.
func TestTargets(t *testing.T) {
	ws := []Result{
		{Name: "agent session 200: load", MedianMS: 2},
		{Name: "agent session 200: load as pydantic-ai", MedianMS: 7, FloorMS: 2, RatioFloor: 3.5},
		{Name: "Go SDK turn, 200 rows", MedianMS: 2, FloorMS: 1.6, RatioFloor: 1.25, FloorDef: "marshal"},
		{Name: "load+compress 10", FloorMS: 0.1, RatioFloor: 1.1},
		{Name: "load+compress 1000", FloorMS: 1, RatioFloor: 1.3},
		{Name: "load+compress 1000, history floor", FloorMS: 1.25, RatioFloor: 1.04, FloorDef: "built"},
		{Name: "store turn into 20", Size: 20, MedianMS: 1.0},
		{Name: "store turn into 1000000", Size: 1_000_000, MedianMS: 1.1},
		{Name: "load a 20-message session", Size: 20, MedianMS: 0.2},
		{Name: "load compacted 1000000 keeping 20", Size: 1_000_000, MedianMS: 0.22},
		{Name: "pop the last of 20", Size: 20, MedianMS: 2},
		{Name: "pop the last of 1000000", Size: 1_000_000, MedianMS: 4.4},
		{Name: "serve pop: the last of 20", Size: 20, MedianMS: 3},
		{Name: "serve pop: the last of 1000000", Size: 1_000_000, MedianMS: 12},
	}
	conc := []ConcResult{{Writers: 32, P50MS: 10, P99MS: 25, RatioPeer: 3.2, TurnsPerSec: 3200, PeerTurnsPerSec: 1000,
		ServerCPUPerTurnMS: 0.6, PeerServerCPUPerTurnMS: 1.5}, {Writers: 32, Shared: true, P50MS: 1, P99MS: 100}}
	http := []HTTPResult{{Name: "store a turn", Ratio: 0.84, BareRatio: 0.85, ServeOverBare: 0.99}, {Name: "load 1000", Ratio: 0.97}}
	want := []struct{ name, measured, met string }{
		{"agent session 200 as pydantic-ai / plain", "3.50x", "no"},
		{"Go SDK turn, 200 rows / in-memory marshal", "1.25x", "yes"},
		{"load+compress 10 / one-SELECT floor", "1.10x", "yes"},
		{"load+compress 1000 / one-SELECT floor", "1.30x", "no"},
		{"a turn into 1000000 / into 20", "1.10", "yes"},
		{"load compacted to keep 20 / a 20-message load (1000000)", "1.10x", "yes"},
		{"pop: the largest session / 20 messages (1000000)", "2.20x", "yes"},
		{"pop through serve: the largest session / 20 messages (1000000)", "4.00x", "no"},
		{"serve / library: store a turn", "84%", "no"},
		{"serve / library: load 1000", "97%", "yes"},
		{"32 writers, own sessions / the Python service", "3.20x", "no"},
		{"32 writers, own sessions: p99 / p50", "2.50x", "yes"},
	}
	got := Targets(ws, conc, http)
	if len(got) != len(want) {
		t.Fatalf("%d targets: %+v", len(got), got)
	}
	for i, w := range want {
		met := "not measured"
		if got[i].Met != nil {
			met = map[bool]string{true: "yes", false: "no"}[*got[i].Met]
		}
		if got[i].Name != w.name || got[i].Measured != w.measured || met != w.met {
			t.Errorf("row %d: %+v (met %s), want %+v", i, got[i], met, w)
		}
	}
	if n := got[3].Note; !strings.HasSuffix(n, "; 1.04x a floor that builds the same history (built: 1.250 ms)") {
		t.Errorf("load 1000's note: %q", n)
	}
	for i, n := range map[int]string{
		8:  "a bare net/http handler (read, decode, call the library, answer) in the same slots: 85% of the library; serve 99% of the bare handler",
		10: "remstore 3200 turns/s, the Python service 1000; PostgreSQL's CPU a turn 0.600 ms and 1.500 ms",
	} {
		if got[i].Note != n {
			t.Errorf("row %d's note: %q, want %q", i, got[i].Note, n)
		}
	}
	// A run without the parts: every row there, none measured.
	none := Targets(nil, nil, nil)
	if len(none) != len(want) || none[0].Name != "agent session as pydantic-ai / plain" || none[1].Name != "Go SDK turn / in-memory marshal" {
		t.Errorf("targets of nothing: %+v", none)
	}
	for _, tg := range none {
		if tg.Met != nil || tg.Measured != "-" || tg.Note != "" {
			t.Errorf("measured from nothing: %+v", tg)
		}
	}
	// The workloads without the Go SDK turn: a build without -tags
	// sdkbench, which the row says (and only then).
	plain := Targets(ws[3:5], nil, nil)
	if plain[1].Name != "Go SDK turn / in-memory marshal" || plain[1].Met != nil || plain[1].Note == "" {
		t.Errorf("workloads without the SDK turn: %+v", plain[1])
	}
}

// TestForPeer: the Python service's pool gets the database without what only
// pgx reads (asyncpg would send it to the server, which refuses it).
func TestForPeer(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h:6432/db?sslmode=disable&default_query_exec_mode=cache_describe": "postgres://u@h:6432/db?sslmode=disable",
		"postgres://u@h/db?pool_max_conns=4&search_path=s":                              "postgres://u@h/db?search_path=s",
		"postgres://u@h/db": "postgres://u@h/db",
	} {
		if got := forPeer(in); got != want {
			t.Errorf("forPeer(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWithSearchPath: the throwaway schema goes into both forms --db takes.
func TestWithSearchPath(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u@h/db?sslmode=disable":      "postgres://u@h/db?search_path=s1&sslmode=disable",
		"postgresql://u@/db?host=/tmp/sock":      "postgresql://u@/db?host=%2Ftmp%2Fsock&search_path=s1",
		"host=/tmp/sock dbname=db user=u":        "host=/tmp/sock dbname=db user=u search_path=s1",
		"host=h dbname=db search_path=public \n": "host=h dbname=db search_path=public search_path=s1",
	} {
		if got := withSearchPath(in, "s1"); got != want {
			t.Errorf("withSearchPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// A larger session measured beside the smallest as its floor gives the
// ratio of the samples that took turns, not of two medians taken minutes
// apart.
func TestScaleRatiosTakeTurns(t *testing.T) {
	rs := []Result{
		{Name: "store turn into 20", MedianMS: 1.0},
		{Name: "store turn into 1000000", MedianMS: 1.4, FloorMS: 1.3, RatioFloor: 1.08},
		{Name: "load a 20-message session", MedianMS: 0.2},
		{Name: "load compacted 1000000 keeping 20", MedianMS: 0.26, FloorMS: 0.25, RatioFloor: 1.04},
		{Name: "load last 20 of 1000000", MedianMS: 0.3},
	}
	if _, _, x, ok := SweepRatio(rs); !ok || x != 1.08 {
		t.Errorf("sweep %v %v, want 1.08", x, ok)
	}
	if _, _, x, ok := CompactedRatio(rs); !ok || x != 1.04 {
		t.Errorf("compacted %v %v, want 1.04", x, ok)
	}
	if _, _, x, ok := BoundedRatio(rs); !ok || x < 1.49 || x > 1.51 { // no floor: the medians, 0.3/0.2
		t.Errorf("bounded %v %v, want 1.5", x, ok)
	}
}

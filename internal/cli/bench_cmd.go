package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/internal/bench"
	"github.com/remstore/remstore/settings"
)

// benchParts are what remstore bench runs, in order.
var benchParts = []string{"workloads", "sweep", "concurrency", "http"}

// benchOutput is what --json writes.
type benchOutput struct {
	Workloads   []bench.Result      `json:"workloads"`
	Concurrency []bench.ConcResult  `json:"concurrency"`
	HTTP        []bench.HTTPResult  `json:"http"`
	Flood       []bench.FloodResult `json:"search_flood,omitempty"`
	Targets     []bench.Target      `json:"targets"`
}

func newBenchCmd(e *env) *cobra.Command {
	o := &benchOpts{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure store, load, lookup and import against --db, each beside the same SQL sent through pgx alone",
		Long: `Runs remstore's benchmark workloads (the ones go test -bench runs) against the
configured database, in a throwaway schema on PostgreSQL, and prints median,
p95, rows/s and the ratio to the floor: the same work done by hand in native
pgx. --json writes the figures; --svg draws lookup latency against table size.
A SQLite file has no throwaway schema: bench leaves its sessions there, so it
refuses a file that holds sessions already; without --db (nor REMSTORE_DB) it
measures on a new SQLite file of its own, removed at the end, never on the
embedded default that holds your conversations.

--peer DIR puts the Python service's own session store (its code in DIR) beside
the workloads it has, on the same database, alternating run by run: store a
turn, load+compress, load+compress+convert to pydantic-ai JSON, lookup (on
remstore's index, and once more with the Python service on the schema its own
install.sql creates, in a schema of its own: "peer schema"). It runs
interop/peer/bench_server.py (--peer-script) under --peer-python, a Python with
the Python service's requirements (interop/peer/requirements.txt; make bench-peer sets it
all up). PostgreSQL only.

Then the parts at scale (--only picks parts): the session-size sweep stores a
4-message turn into sessions of 20 to 1,000,000 messages (a turn's cost must
not grow with the session; the last line is the largest over the smallest);
the concurrency workload has 1, 8 and 32 writers storing turns into sessions of
their own and 32 into one session for --duration each (turns/s, p50, p99,
beside the Python service's own code doing the same, then checks that every
acknowledged turn is stored with gap-free positions); the HTTP workload
stores turns and loads 1,000 messages with --http-clients clients through the
API as remstore serve serves it, through a bare net/http handler (read,
decode, call the library, answer: what any HTTP server must do) and on the
library, the three taking turns in half-second slots.

On a Citus coordinator with workers, the benchmark's tables are distributed by
session first (remstore citus distribute); make bench-citus runs the same
workloads on single-node PostgreSQL and on a 3-node Citus cluster side by side.

Through PgBouncer in transaction mode the throwaway schema cannot be set (it is
a startup parameter PgBouncer refuses): give --db an empty database of its
own, with search_path in PgBouncer's ignore_startup_parameters and
default_query_exec_mode=cache_describe in the URL; bench refuses a database
that holds remstore's tables already. --peer then runs the Python service
through PgBouncer too.`,
		Example: "  remstore bench --db postgres://localhost/bench --iterations 50 --json bench.json --svg lookup.svg\n" +
			"  remstore bench --db postgres://localhost/bench --quick\n" +
			"  remstore bench --db postgres://localhost/bench --only concurrency,http --duration 10s\n" +
			"  remstore bench --db postgres://localhost/bench --peer path/to/python-service --peer-python interop/.venv-peer/bin/python",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			parts, stop, err := o.check()
			if err != nil {
				return err
			}
			defer stop()
			return o.run(e, parts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.iters, "iterations", 30, "runs of each workload (and of its floor)")
	f.BoolVar(&o.quick, "quick", false, "small sizes (seconds, not minutes)")
	f.StringVar(&o.jsonFile, "json", "", "write the results as JSON to this file")
	f.StringVar(&o.svgFile, "svg", "", "write a chart of lookup latency against table size")
	f.DurationVar(&o.duration, "duration", 0, "how long each concurrency and HTTP run lasts (default 5s, 500ms with --quick)")
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run (remstore's side: go tool pprof) to this file")
	f.StringVar(&o.only, "only", strings.Join(benchParts, ","), "the parts to run, comma-separated")
	f.IntVar(&o.httpClients, "http-clients", 8, "concurrent clients of the HTTP workload")
	f.StringVar(&o.peerDir, "peer", "", "the Python service's code (its published package): measure it beside remstore")
	f.StringVar(&o.peerPython, "peer-python", "python3", "a Python with the Python service's requirements")
	f.StringVar(&o.peerScript, "peer-script", "interop/peer/bench_server.py", "the Python service's side of the benchmark")
	return cmd
}

// benchOpts are bench's flags.
type benchOpts struct {
	iters                           int
	quick                           bool
	jsonFile, svgFile               string
	peerDir, peerPython, peerScript string
	duration                        time.Duration
	only, cpuProfile                string
	httpClients                     int
}

// check validates the flags, picks the parts to run and starts the CPU
// profile when asked (stop ends it).
func (o *benchOpts) check() (parts map[string]bool, stop func(), err error) {
	stop = func() {}
	if o.iters < 1 {
		return nil, nil, usageErr("--iterations must be >= 1")
	}
	parts = map[string]bool{}
	for _, p := range strings.Split(o.only, ",") {
		if !slices.Contains(benchParts, p) {
			return nil, nil, usageErr("--only: %q is not one of %s", p, strings.Join(benchParts, ", "))
		}
		parts[p] = true
	}
	if o.httpClients < 1 {
		return nil, nil, usageErr("--http-clients must be >= 1")
	}
	if o.duration < 0 {
		return nil, nil, usageErr("--duration must not be negative")
	}
	// The figures are written at the end of a run that may take minutes:
	// a path they cannot go to is refused before it starts.
	for _, f := range []struct{ flag, path string }{{"--json", o.jsonFile}, {"--svg", o.svgFile}} {
		if err := writable(f.path); err != nil {
			return nil, nil, usageErr("%s: %v", f.flag, err)
		}
	}
	if o.duration == 0 {
		o.duration = 5 * time.Second
		if o.quick {
			o.duration = 500 * time.Millisecond
		}
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return nil, nil, usageErr("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return nil, nil, err
		}
		stop = func() { pprof.StopCPUProfile(); _ = f.Close() }
	}
	return parts, stop, nil
}

// count is a statement count, or "-" for one not taken (-1: no floor, or no
// Python service beside the workload), as scripts/bench_table.py prints it.
func count(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// writable checks that a file can be written at path ("" for none),
// leaving an existing file as it was and removing one it made.
func writable(path string) error {
	if path == "" {
		return nil
	}
	_, statErr := os.Stat(path)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_ = f.Close()
	if os.IsNotExist(statErr) {
		_ = os.Remove(path)
	}
	return nil
}

// run measures the parts on the configured database and prints (and
// writes) the figures.
func (o *benchOpts) run(e *env, parts map[string]bool) error {
	dbURL := e.cfg.DatabaseURL
	if e.cfg.Sources[settings.KeyDB] == "default" {
		// Without a database named, the embedded default is the user's own
		// conversations: the run gets a file of its own instead.
		dir, err := os.MkdirTemp("", "remstore-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		dbURL = filepath.Join(dir, "bench.db")
		fmt.Fprintf(e.stderr, "no --db given: measuring on a new SQLite file, %s (removed at the end), not on %s\n", dbURL, e.cfg.DatabaseURL)
	}
	env, err := bench.Open(e.ctx, dbURL)
	if err != nil {
		return err
	}
	defer env.Close()
	if c := env.Citus; c != nil {
		fmt.Fprintf(e.stderr, "Citus %s coordinator with %s: the benchmark's tables are distributed by session (%d shards)\n",
			c.Version, plural(c.Workers, "worker"), c.Tables[1].Shards)
	}
	// The Python service's side lives for the whole run: the workloads and
	// the concurrency part both measure it.
	if o.peerDir != "" {
		if env.Conn == nil {
			return usageErr("--peer needs a PostgreSQL --db")
		}
		p, err := bench.StartPeer(o.peerPython, o.peerScript, o.peerDir, env.URL)
		if err != nil {
			return err
		}
		defer p.Close()
		env.Peer = p
	}
	results, err := o.workloads(e, env, parts)
	if err != nil {
		return err
	}
	out := benchOutput{Workloads: results}
	if err := o.atScale(e, env, parts, &out); err != nil {
		return err
	}
	out.Targets = bench.Targets(out.Workloads, out.Concurrency, out.HTTP)
	printTargets(e, out.Targets)
	if o.jsonFile != "" {
		b, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(o.jsonFile, append(b, '\n'), 0o644); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if o.svgFile != "" {
		if err := os.WriteFile(o.svgFile, []byte(bench.LookupSVG(results)), 0o644); err != nil {
			return fmt.Errorf("--svg: %w", err)
		}
	}
	return nil
}

// workloads prepares and measures the per-call workloads and the size
// sweep, printing a line each.
func (o *benchOpts) workloads(e *env, env *bench.Env, parts map[string]bool) ([]bench.Result, error) {
	var err error
	sizes := bench.Full
	if o.quick {
		sizes = bench.Quick
	}
	var ws []bench.Workload
	if parts["workloads"] {
		fmt.Fprintf(e.stderr, "preparing workloads (%s)...\n", sizes)
		if ws, err = env.Workloads(e.ctx, sizes); err != nil {
			return nil, err
		}
	}
	if env.Peer != nil && parts["workloads"] {
		// The same lookup, with the peer on the schema its own
		// install.sql creates (no index on the key).
		n := sizes.Lookups[len(sizes.Lookups)-1]
		op, cleanup, err := env.PeerOwnSchema(e.ctx, o.peerPython, o.peerScript, o.peerDir, n)
		if err != nil {
			// Its install.sql needs pgvector; without it, say so and go on.
			fmt.Fprintf(e.stderr, "the Python service's own schema is not available (%v); its lookup is left out\n", err)
		} else {
			defer cleanup()
		}
		for _, w := range ws {
			if op == nil {
				break
			}
			if w.Name == fmt.Sprintf("lookup in %d rows", n) {
				ws = append(ws, bench.Workload{Name: fmt.Sprintf("lookup in %d rows, peer schema", n), Rows: 1, Size: n, Run: w.Run, Peer: op})
				break
			}
		}
	}
	sweep := sizes.Sweep
	if env.Conn == nil { // SQLite fills by store calls: the sweep stops at 100k there
		sweep = slices.DeleteFunc(slices.Clone(sweep), func(n int) bool { return n > 100_000 })
	}
	if parts["sweep"] {
		fmt.Fprintf(e.stderr, "preparing the session-size sweep (sessions of %s messages)...\n", strings.Trim(strings.Join(strings.Fields(fmt.Sprint(sweep)), ", "), "[]"))
		sw, err := env.SweepWorkloads(e.ctx, sweep)
		if err != nil {
			return nil, err
		}
		ws = append(ws, sw...)
		sp, stop, err := env.ServePopWorkloads(e.ctx, sweep)
		if err != nil {
			return nil, err
		}
		defer stop()
		ws = append(ws, sp...)
	}
	var results []bench.Result
	if len(ws) > 0 { // none with --only concurrency,http
		fmt.Fprintf(e.stdout, "%-30s %10s %10s %12s %10s %8s %10s %8s %12s\n", "workload", "median ms", "p95 ms", "rows/s", "floor ms", "ratio", "py ms", "py/us", "stmts us/fl/py")
		fmt.Fprintf(e.stdout, "(floor: the same work by hand, defined under the table; py: the Python service's own code, with --peer)\n")
	}
	for _, w := range ws {
		r, err := bench.Measure(e.ctx, w, o.iters)
		if err != nil {
			return nil, err
		}
		if st := env.CountStatements(e.ctx, w); st.Remstore >= 0 {
			r.Statements = &st
		}
		results = append(results, r)
		floor, ratio, peer, pratio := "-", "-", "-", "-"
		if r.FloorMS > 0 {
			floor, ratio = fmt.Sprintf("%.3f", r.FloorMS), fmt.Sprintf("%.2f", r.RatioFloor)
		}
		if r.PeerMS > 0 {
			peer, pratio = fmt.Sprintf("%.3f", r.PeerMS), fmt.Sprintf("%.1f", r.RatioPeer)
		}
		stmts := "-"
		if r.Statements != nil {
			stmts = count(r.Statements.Remstore) + "/" + count(r.Statements.Floor) + "/" + count(r.Statements.Peer)
		}
		fmt.Fprintf(e.stdout, "%-30s %10.3f %10.3f %12.0f %10s %8s %10s %8s %12s\n", r.Name, r.MedianMS, r.P95MS, r.RowsPerSec, floor, ratio, peer, pratio, stmts)
	}
	defs := map[string]bool{}
	for _, r := range results { // what each ratio divides by
		if r.FloorDef != "" && !defs[r.FloorDef] {
			defs[r.FloorDef] = true
			fmt.Fprintf(e.stdout, "floor of %s (and those like it): %s\n", r.Name, r.FloorDef)
		}
	}
	if small, large, ratio, ok := bench.SweepRatio(results); ok {
		fmt.Fprintf(e.stdout, "\nsession-size sweep: a turn into %s / into %s = %.2f\n", large.Name[len("store turn into "):], small.Name[len("store turn into "):], ratio)
	}
	if base, large, ratio, ok := bench.BoundedRatio(results); ok {
		fmt.Fprintf(e.stdout, "bounded load: %s / %s = %.2f\n", large.Name, base.Name, ratio)
	}
	if base, large, ratio, ok := bench.CompactedRatio(results); ok {
		fmt.Fprintf(e.stdout, "compacted load: %s / %s = %.2f\n", large.Name, base.Name, ratio)
	}
	if base, large, ratio, ok := bench.PopRatio(results); ok {
		fmt.Fprintf(e.stdout, "pop: %s / %s = %.2f\n", large.Name, base.Name, ratio)
	}
	if base, large, ratio, ok := bench.ServePopRatio(results); ok {
		fmt.Fprintf(e.stdout, "pop through serve: %s / %s = %.2f\n", large.Name, base.Name, ratio)
	}
	return results, nil
}

// atScale runs the concurrency and HTTP parts (with the search flood)
// into out, printing their tables.
func (o *benchOpts) atScale(e *env, env *bench.Env, parts map[string]bool, out *benchOutput) error {
	var err error
	if parts["concurrency"] {
		fmt.Fprintf(e.stdout, "\n%-26s %8s %10s %9s %9s %10s %9s %9s %8s %8s %8s %8s\n", "concurrency (4-msg turns)", "turns", "turns/s", "p50 ms", "p99 ms", "py t/s", "py p50", "py p99", "vs py", "py lost",
			"pg ms/t", "py pg")
		fmt.Fprintf(e.stdout, "(py: the Python service's own code doing the same beside remstore, with --peer)\n")
	}
	for _, c := range bench.ConcurrencyCases {
		if !parts["concurrency"] {
			break
		}
		r, err := env.Concurrency(e.ctx, c.Writers, c.Shared, o.duration)
		if err != nil {
			return err
		}
		out.Concurrency = append(out.Concurrency, r)
		peer := [5]string{"-", "-", "-", "-", "-"}
		if r.PeerTurnsPerSec > 0 {
			peer = [5]string{fmt.Sprintf("%.0f", r.PeerTurnsPerSec), fmt.Sprintf("%.2f", r.PeerP50MS), fmt.Sprintf("%.2f", r.PeerP99MS), fmt.Sprintf("%.2fx", r.RatioPeer), fmt.Sprint(r.PeerMissing)}
		}
		cpu := [2]string{"-", "-"} // PostgreSQL's CPU per turn (ServerCPU): remstore's, the peer's
		for i, v := range []float64{r.ServerCPUPerTurnMS, r.PeerServerCPUPerTurnMS} {
			if v > 0 {
				cpu[i] = fmt.Sprintf("%.3f", v)
			}
		}
		fmt.Fprintf(e.stdout, "%-26s %8d %10.0f %9.2f %9.2f %10s %9s %9s %8s %8s %8s %8s\n", r.Name, r.Turns, r.TurnsPerSec, r.P50MS, r.P99MS, peer[0], peer[1], peer[2], peer[3], peer[4],
			cpu[0], cpu[1])
	}
	var hs []bench.HTTPResult
	if parts["http"] {
		if hs, err = env.HTTP(e.ctx, o.httpClients, o.duration); err != nil {
			return err
		}
	}
	out.HTTP = hs
	if parts["http"] {
		for _, polite := range []bool{true, false} {
			f, err := env.SearchFlood(e.ctx, 4, 16, o.duration, polite)
			if err != nil {
				return err
			}
			out.Flood = append(out.Flood, f)
			how := "answering each 429 at once"
			if polite {
				how = "waiting what each 429's Retry-After says"
			}
			fmt.Fprintf(e.stdout, "\nsearch flood: %d clients of one tenant search without pause, %s (%d answered, %d refused 429, %d timed out);\n"+
				"  another tenant's 1k loads, %d clients: %.0f/s alone, %.0f/s beside the flood = %.0f%% (p99 %.2f vs %.2f ms)\n",
				f.Flooders, how, f.Searches, f.Refused, f.TimedOut, f.Loaders, f.QuietPerSec, f.FloodPerSec, 100*f.Ratio, f.QuietP99MS, f.FloodP99MS)
		}
	}
	if len(hs) > 0 {
		fmt.Fprintf(e.stdout, "\n%-14s %7s %10s %8s %10s %8s %10s %8s %9s %9s %10s\n", "serve vs library", "clients",
			"library/s", "lib p50", "bare/s", "bare p50", "serve/s", "serve p50", "bare/lib", "serve/lib", "serve/bare")
	}
	for _, h := range hs {
		fmt.Fprintf(e.stdout, "%-14s %7d %10.0f %8.2f %10.0f %8.2f %10.0f %9.2f %8.0f%% %8.0f%% %9.0f%%\n", h.Name, h.Clients,
			h.LibraryPerSec, h.LibraryP50MS, h.BarePerSec, h.BareP50MS, h.HTTPPerSec, h.HTTPP50MS, 100*h.BareRatio, 100*h.Ratio, 100*h.ServeOverBare)
	}
	return nil
}

// printTargets writes the targets table: each goal beside this run's figure.
func printTargets(e *env, ts []bench.Target) {
	fmt.Fprintf(e.stdout, "\n%-52s %9s %10s %s\n", "targets (this run)", "goal", "measured", "met")
	for _, t := range ts {
		met := "not measured"
		if t.Met != nil {
			met = map[bool]string{true: "yes", false: "no"}[*t.Met]
		}
		fmt.Fprintf(e.stdout, "%-52s %9s %10s %s\n", t.Name, t.Goal, t.Measured, met)
		if t.Note != "" {
			fmt.Fprintf(e.stdout, "    %s\n", t.Note)
		}
	}
}

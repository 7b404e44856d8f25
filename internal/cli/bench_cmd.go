package cli

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/internal/bench"
)

func newBenchCmd(e *env) *cobra.Command {
	var iters int
	var quick bool
	var jsonFile, svgFile string
	var peerDir, peerPython, peerScript string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure store, load, lookup and import against --db, each beside its native-pgx floor",
		Long: `Runs remstore's benchmark workloads (the ones go test -bench runs) against the
configured database, in a throwaway schema on PostgreSQL, and prints median,
p95, rows/s and the ratio to the floor: the same work done by hand in native
pgx. --json writes the figures; --svg draws lookup latency against table size.

--peer DIR puts the Python peer's own session store (its code in DIR) beside
the workloads it has, on the same database, alternating run by run: store a
turn, load+compress, load+compress+convert to pydantic-ai JSON, lookup (on
remstore's index, and once more with the peer on the schema its own
install.sql creates, in a schema of its own: "peer schema"). It runs
interop/peer/bench_server.py (--peer-script) under --peer-python, a Python with
the peer's requirements (interop/peer/requirements.txt; make bench-peer sets it
all up). PostgreSQL only.

On a Citus coordinator with workers, the benchmark's tables are distributed by
session first (remstore citus distribute); make bench-citus runs the same
workloads on single-node PostgreSQL and on a 3-node Citus cluster side by side.`,
		Example: "  remstore bench --db postgres://localhost/bench --iterations 50 --json bench.json --svg lookup.svg\n" +
			"  remstore bench --quick\n" +
			"  remstore bench --db postgres://localhost/bench --peer ../shared/peer --peer-python interop/.venv-peer/bin/python",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if iters < 1 {
				return usageErr("--iterations must be >= 1")
			}
			env, err := bench.Open(e.ctx, e.cfg.DatabaseURL)
			if err != nil {
				return err
			}
			defer env.Close()
			if c := env.Citus; c != nil {
				fmt.Fprintf(e.stderr, "Citus %s coordinator with %s: the benchmark's tables are distributed by session (%d shards)\n",
					c.Version, plural(c.Workers, "worker"), c.Tables[1].Shards)
			}
			sizes := bench.Full
			if quick {
				sizes = bench.Quick
			}
			if peerDir != "" {
				if env.Conn == nil {
					return usageErr("--peer needs a PostgreSQL --db")
				}
				p, err := bench.StartPeer(peerPython, peerScript, peerDir, env.URL)
				if err != nil {
					return err
				}
				defer p.Close()
				env.Peer = p
			}
			fmt.Fprintf(e.stderr, "preparing workloads (sizes %v)...\n", sizes)
			ws, err := env.Workloads(e.ctx, sizes)
			if err != nil {
				return err
			}
			if env.Peer != nil {
				// The same lookup, with the peer on the schema its own
				// install.sql creates (no index on the key).
				n := sizes.Lookups[len(sizes.Lookups)-1]
				op, cleanup, err := env.PeerOwnSchema(e.ctx, peerPython, peerScript, peerDir, n)
				if err != nil {
					// Its install.sql needs pgvector; without it, say so and go on.
					fmt.Fprintf(e.stderr, "the peer's own schema is not available (%v); its lookup is left out\n", err)
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
			var results []bench.Result
			fmt.Fprintf(e.stdout, "%-30s %10s %10s %12s %10s %8s %10s %8s %12s\n", "workload", "median ms", "p95 ms", "rows/s", "floor ms", "ratio", "peer ms", "peer/us", "stmts us/fl/peer")
			for _, w := range ws {
				r, err := bench.Measure(e.ctx, w, iters)
				if err != nil {
					return err
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
					stmts = fmt.Sprintf("%d/%d/%d", r.Statements.Remstore, r.Statements.Floor, r.Statements.Peer)
				}
				fmt.Fprintf(e.stdout, "%-30s %10.3f %10.3f %12.0f %10s %8s %10s %8s %12s\n", r.Name, r.MedianMS, r.P95MS, r.RowsPerSec, floor, ratio, peer, pratio, stmts)
			}
			if jsonFile != "" {
				b, _ := json.MarshalIndent(results, "", "  ")
				if err := os.WriteFile(jsonFile, append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			if svgFile != "" {
				if err := os.WriteFile(svgFile, []byte(bench.LookupSVG(results)), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().IntVar(&iters, "iterations", 30, "runs of each workload (and of its floor)")
	cmd.Flags().BoolVar(&quick, "quick", false, "small sizes (seconds, not minutes)")
	cmd.Flags().StringVar(&jsonFile, "json", "", "write the results as JSON to this file")
	cmd.Flags().StringVar(&svgFile, "svg", "", "write a chart of lookup latency against table size")
	cmd.Flags().StringVar(&peerDir, "peer", "", "the Python peer's code (e.g. ../shared/peer): measure it beside remstore")
	cmd.Flags().StringVar(&peerPython, "peer-python", "python3", "a Python with the peer's requirements")
	cmd.Flags().StringVar(&peerScript, "peer-script", "interop/peer/bench_server.py", "the peer's side of the benchmark")
	return cmd
}

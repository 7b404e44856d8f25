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
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure store, load, lookup and import against --db, each beside its native-pgx floor",
		Long: `Runs remstore's benchmark workloads (the ones go test -bench runs) against the
configured database, in a throwaway schema on PostgreSQL, and prints median,
p95, rows/s and the ratio to the floor: the same work done by hand in native
pgx. --json writes the figures; --svg draws lookup latency against table size.`,
		Example: "  remstore bench --db postgres://localhost/bench --iterations 50 --json bench.json --svg lookup.svg\n" +
			"  remstore bench --quick",
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
			sizes := bench.Full
			if quick {
				sizes = bench.Quick
			}
			fmt.Fprintf(e.stderr, "preparing workloads (sizes %v)...\n", sizes)
			ws, err := env.Workloads(e.ctx, sizes)
			if err != nil {
				return err
			}
			var results []bench.Result
			fmt.Fprintf(e.stdout, "%-30s %10s %10s %12s %10s %8s\n", "workload", "median ms", "p95 ms", "rows/s", "floor ms", "ratio")
			for _, w := range ws {
				r, err := bench.Measure(e.ctx, w, iters)
				if err != nil {
					return err
				}
				results = append(results, r)
				floor, ratio := "-", "-"
				if r.FloorMS > 0 {
					floor, ratio = fmt.Sprintf("%.3f", r.FloorMS), fmt.Sprintf("%.2f", r.RatioFloor)
				}
				fmt.Fprintf(e.stdout, "%-30s %10.3f %10.3f %12.0f %10s %8s\n", r.Name, r.MedianMS, r.P95MS, r.RowsPerSec, floor, ratio)
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
	return cmd
}

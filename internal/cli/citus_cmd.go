package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/citus"
	"github.com/remstore/remstore/settings"
)

func newCitusCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "citus",
		Short: "Distribute remstore's tables on a Citus cluster, undo it, or show how they are distributed",
		Long: `On a Citus coordinator (distributed PostgreSQL), distribute makes sessions a
distributed table by id and messages one by session_id, co-located, so a
session and its messages live on one worker; messages' primary key becomes
(session_id, id), as Citus requires; the store function is distributed by its
session argument, so a store runs on the worker that holds the session. Rows
already there move to the workers. It is idempotent. undistribute brings the
tables back to the coordinator. status shows what is distributed.

See docs/scale-out.md for the design, the routing and the figures.`,
		Example: "  remstore citus distribute --db postgres://coordinator/app --shard-count 32\n  remstore citus status --db postgres://coordinator/app",
	}
	var shards int
	distribute := &cobra.Command{
		Use:     "distribute",
		Short:   "Make sessions and messages distributed tables, co-located by session",
		Example: "  remstore citus distribute --db postgres://coordinator/app --shard-count 32",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkDistribute(e, shards); err != nil {
				return err
			}
			return e.withDB(writes, func(db *repository.DB) error { return runDistribute(e, db, shards) })(cmd, args)
		},
	}
	distribute.Flags().IntVar(&shards, "shard-count", 0, "shards per table (default: the cluster's citus.shard_count, 32 unless set)")
	undistribute := &cobra.Command{
		Use:     "undistribute",
		Short:   "Bring sessions and messages back to the coordinator as local tables",
		Example: "  remstore citus undistribute --db postgres://coordinator/app",
		Args:    cobra.NoArgs,
		RunE: e.withDB(readOnly, func(db *repository.DB) error {
			steps, err := citus.Undistribute(e.ctx, db)
			printSteps(e, steps, "nothing to do: the tables are local")
			return err
		}),
	}
	status := &cobra.Command{
		Use:     "status",
		Short:   "Show how remstore's tables are distributed",
		Example: "  remstore citus status --db postgres://coordinator/app --json",
		Args:    cobra.NoArgs,
		RunE: e.withDB(readOnly, func(db *repository.DB) error {
			st, err := citus.Status(e.ctx, db)
			if err != nil {
				return err
			}
			if e.jsonOut {
				return writeJSON(e, st)
			}
			if st.Version == "" {
				fmt.Fprintln(e.stdout, "citus: not installed in this database (the tables are local)")
				return nil
			}
			fmt.Fprintf(e.stdout, "citus %s, %s, store function %s\n", st.Version, plural(st.Workers, "worker"),
				map[bool]string{true: "distributed by session", false: "local"}[st.Function])
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TABLE\tTYPE\tCOLUMN\tSHARDS\tCOLOCATION\tPRIMARY KEY")
			for _, t := range st.Tables {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t(%s)\n", t.Name, t.Type, dash(t.Column), t.Shards, t.Colocation, strings.Join(t.PrimaryKey, ", "))
			}
			return tw.Flush()
		}),
	}
	cmd.AddCommand(distribute, undistribute, status)
	return cmd
}

// withDB is a command's RunE that opens the database (see openDB) for fn.
func (e *env) withDB(write bool, fn func(*repository.DB) error) func(*cobra.Command, []string) error {
	return func(*cobra.Command, []string) error {
		db, err := e.openDB(write)
		if err != nil {
			return err
		}
		defer db.Close()
		return fn(db)
	}
}

// checkDistribute refuses what cannot be distributed before anything is
// opened, migrated or created.
func checkDistribute(e *env, shards int) error {
	if shards < 0 {
		return usageErr("--shard-count: must be 0 (the cluster's default) or more")
	}
	if !settings.IsPostgres(e.cfg.DatabaseURL) {
		return usageErr("%s: distributing needs a PostgreSQL URL of a Citus coordinator, not a SQLite file", e.cfg.Origin(settings.KeyDB))
	}
	return nil
}

func runDistribute(e *env, db *repository.DB, shards int) error {
	steps, err := citus.Distribute(e.ctx, db, citus.DistributeOptions{ShardCount: shards})
	if err != nil && len(steps) == 0 {
		return err // nothing was done: "already distributed" would be false
	}
	printSteps(e, steps, "nothing to do: already distributed")
	return err
}

func printSteps(e *env, steps []string, none string) {
	if len(steps) == 0 {
		fmt.Fprintln(e.stdout, none)
	}
	for _, s := range steps {
		fmt.Fprintln(e.stdout, s)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
	"github.com/remstore/remstore/transfer"
)

func newExportCmd(e *env) *cobra.Command {
	var sessionID, out string
	var all, allTenants bool
	cmd := &cobra.Command{
		Use:   "export (--session-id ID | --all)",
		Short: "Write sessions and messages as JSON Lines (lossless, PostgreSQL <-> SQLite)",
		Long: `Writes a "session" record, then one "message" record per message with every
column (tenant, timestamps, metadata), for one session or all of them. Only the
--user-id tenant's messages are exported unless --all-tenants (which alone means
every session of every tenant). With -o the file appears only once the export
is whole.`,
		Example: "  remstore export --all --db postgres://localhost/app > backup.jsonl\n" +
			"  remstore export --session-id chat-1 --user-id alice -o chat-1.jsonl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if allTenants && sessionID == "" {
				all = true // every tenant's sessions are all sessions
			}
			if all == (sessionID != "") {
				return usageErr("give --session-id ID or --all (--all-tenants widens --all to every tenant)")
			}
			db, err := e.openDB(readOnly)
			if err != nil {
				return err
			}
			defer db.Close()
			w := e.stdout
			var tmp *os.File
			if out != "" && out != "-" {
				// Written beside the target and renamed when complete, so a
				// failed export never leaves a file that looks like a backup.
				tmp, err = os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.partial")
				if err != nil {
					return usageErr("--output: %v", err)
				}
				defer func() { _ = tmp.Close(); _ = os.Remove(tmp.Name()) }()
				w = tmp
			}
			o := transfer.ExportOptions{SessionID: sessionID, TenantID: e.cfg.UserID}
			if allTenants {
				o.TenantID = ""
			}
			n, err := transfer.Export(e.ctx, db, w, o)
			if err != nil {
				return err
			}
			if tmp != nil {
				if err := tmp.Close(); err != nil {
					return fmt.Errorf("--output: %w", err)
				}
				if err := os.Rename(tmp.Name(), out); err != nil {
					return fmt.Errorf("--output: %w", err)
				}
			}
			e.log.Info("exported", "messages", n)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&sessionID, "session-id", "", "export one session")
	f.BoolVar(&all, "all", false, "export every session")
	f.BoolVar(&allTenants, "all-tenants", false, "every tenant's messages, not only --user-id's")
	f.StringVarP(&out, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func newImportCmd(e *env) *cobra.Command {
	var batch int
	var allTenants, atomic, anyRole bool
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Load a JSON Lines export; safe to run again after an interruption",
		Long: `Reads an export ("-" for stdin) and writes it in batches, each one transaction
(COPY on PostgreSQL). Rows whose id already exists are skipped, so an import
that was interrupted can simply be run again: every message ends up exactly
once. A progress bar shows on a terminal.

Every record is checked as a store checks what it writes (UTF-8, NUL bytes,
lengths, timestamps in years 1 to 9999, lone surrogates, repeated keys, an id
twice in a batch); a bad one stops the import with its line number (exit 2).
Rows must belong to the --user-id tenant, and messages must go into that
tenant's sessions, unless --all-tenants (an operator restoring every tenant's
export). A message role outside user, assistant, tool, system, function,
model is refused, as every write of remstore refuses it; --any-role restores
such rows (the Python service writes any role) as they were. Without --atomic the batches before a bad line stay committed (the
error says up to which line; fix the file and run the same command again);
with --atomic the whole file is one transaction and a bad line writes nothing.

The per-user limits (REMSTORE_MAX_SESSIONS, REMSTORE_MAX_SESSION_MESSAGES) hold
as for a store, for every user the file has rows of (--all-tenants too): a
batch that would pass one is refused naming its lines (exit 2) and writes
nothing; what the database holds already counts, and what it finds there
already (a resumed import) adds nothing.`,
		Example: "  remstore import backup.jsonl --all-tenants --db postgres://localhost/app\n" +
			"  remstore import alice.jsonl --user-id alice --atomic",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch < 1 { // a batch holds at least one record
				return usageErr("--batch-size must be at least 1 (records per transaction), not %d", batch)
			}
			var r io.Reader = e.stdin
			var size int64 = -1
			if args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usageErr("%v", err)
				}
				defer f.Close()
				if st, err := f.Stat(); err == nil {
					size = st.Size()
				}
				r = f
			}
			db, err := e.openDB(writes)
			if err != nil {
				return err
			}
			defer db.Close()
			o := transfer.ImportOptions{BatchSize: batch, Tenant: e.cfg.UserID, AllTenants: allTenants, Atomic: atomic, AnyRole: anyRole,
				Limits: sessionstore.LimitsOf(e.cfg)}
			if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				bar := progressbar.DefaultBytes(size, "importing")
				o.Progress = func(n int64) { _ = bar.Set64(n) }
				defer bar.Finish()
			}
			st, err := transfer.Import(e.ctx, db, r, o)
			if err != nil {
				switch {
				case atomic:
					fmt.Fprintln(e.stderr, "remstore: nothing imported (--atomic)")
				case st.CommittedLines > 0:
					fmt.Fprintf(e.stderr, "remstore: lines 1-%d are imported (%d messages new); fix the file and run the same command again: what is there is skipped\n",
						st.CommittedLines, st.Inserted)
				default:
					fmt.Fprintln(e.stderr, "remstore: nothing imported")
				}
				return err
			}
			fmt.Fprintf(e.stdout, "sessions %d, messages %d: %d inserted, %d already present\n", st.Sessions, st.Messages, st.Inserted, st.Skipped)
			return nil
		},
	}
	cmd.Flags().IntVar(&batch, "batch-size", 1000, "records per transaction")
	cmd.Flags().BoolVar(&allTenants, "all-tenants", false, "import every tenant's rows, not only --user-id's")
	cmd.Flags().BoolVar(&anyRole, "any-role", false, "restore message rows whatever their role (the Python service writes any); without it a role outside user, assistant, tool, system, function, model is refused")
	cmd.Flags().BoolVar(&atomic, "atomic", false, "one transaction for the whole file: a bad line imports nothing")
	return cmd
}

func newMigrateCmd(e *env) *cobra.Command {
	var distributed bool
	var shards int
	cmd := &cobra.Command{
		Use:   "migrate [up|down|status]",
		Short: "Apply, roll back or list remstore's schema migrations",
		Long: `up (the default) applies every pending migration: the tables if missing
(a no-op on a database the Python service created) and remstore's indexes. down rolls
back the last group applied. status lists each migration and whether it is
applied. Never roll back the table migration on a database the Python service uses: its
down step drops the tables. With --distributed, up then distributes the tables
on a Citus coordinator (remstore citus distribute).`,
		Example:   "  remstore migrate status --db postgres://localhost/app",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"up", "down", "status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "up"
			if len(args) == 1 {
				action = args[0]
			}
			if distributed {
				if action != "up" {
					return usageErr("migrate: --distributed goes with up")
				}
				if err := checkDistribute(e, shards); err != nil {
					return err
				}
			}
			var db *repository.DB
			var err error
			switch action {
			case "up", "down":
				db, err = e.openDB(writes)
			case "status": // read-only, and answers on a database with no tables too
				db, err = repository.OpenWith(e.ctx, e.cfg.DatabaseURL, repository.Options{Configure: e.pgConfig, ReadOnly: true})
				if err != nil {
					err = fmt.Errorf("%s: %w", e.cfg.Origin(settings.KeyDB), err)
				}
			default:
				return usageErr("migrate: %q is not up, down or status", action)
			}
			if err != nil {
				return err
			}
			defer db.Close()
			if action == "down" {
				g, err := migrations.Rollback(e.ctx, db)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "rolled back %s\n", g)
				return nil
			}
			if distributed {
				if err := runDistribute(e, db, shards); err != nil {
					return err
				}
			}
			ms, err := migrations.Status(e.ctx, db)
			if err != nil {
				return err
			}
			if e.jsonOut {
				return writeJSON(e, ms)
			}
			tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "MIGRATION\tNAME\tSTATE")
			for _, x := range ms {
				state := "pending"
				if x.Applied {
					state = "applied"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", x.Name, x.Comment, state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&distributed, "distributed", false, "after up, distribute the tables on Citus (remstore citus distribute)")
	cmd.Flags().IntVar(&shards, "shard-count", 0, "with --distributed: shards per table")
	return cmd
}

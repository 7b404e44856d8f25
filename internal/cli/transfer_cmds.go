package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/remstore/remstore/repository"
)

func newExportCmd(e *env) *cobra.Command {
	var sessionID, out string
	var all, allTenants bool
	cmd := &cobra.Command{
		Use:   "export (--session-id ID | --all)",
		Short: "Write sessions and messages as JSON Lines (lossless, PostgreSQL <-> SQLite)",
		Long: `Writes a "session" record, then one "message" record per message with every
column (tenant, timestamps, metadata), for one session or all of them. Only the
--user-id tenant's messages are exported unless --all-tenants.`,
		Example: "  remstore export --all --db postgres://localhost/app > backup.jsonl\n" +
			"  remstore export --session-id chat-1 --user-id alice -o chat-1.jsonl",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all == (sessionID != "") {
				return usageErr("give exactly one of --session-id and --all")
			}
			s, err := e.openStore()
			if err != nil {
				return err
			}
			defer s.DB().Close()
			w := e.stdout
			if out != "" && out != "-" {
				f, err := os.Create(out)
				if err != nil {
					return usageErr("-o: %v", err)
				}
				defer f.Close()
				w = f
			}
			o := repository.ExportOptions{SessionID: sessionID, TenantID: e.cfg.UserID}
			if allTenants {
				o.TenantID = ""
			}
			n, err := repository.Export(e.ctx, s.DB(), w, o)
			if err != nil {
				return err
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
	cmd := &cobra.Command{
		Use:   "import FILE",
		Short: "Load a JSON Lines export; safe to run again after an interruption",
		Long: `Reads an export ("-" for stdin) and writes it in batches, each one transaction
(COPY on PostgreSQL). Rows whose id already exists are skipped, so an import
that was interrupted can simply be run again: every message ends up exactly
once. A progress bar shows on a terminal.`,
		Example: "  remstore import backup.jsonl --db postgres://localhost/app",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			s, err := e.openStore()
			if err != nil {
				return err
			}
			defer s.DB().Close()
			o := repository.ImportOptions{BatchSize: batch}
			if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				bar := progressbar.DefaultBytes(size, "importing")
				o.Progress = func(n int64) { _ = bar.Set64(n) }
				defer bar.Finish()
			}
			st, err := repository.Import(e.ctx, s.DB(), r, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "sessions %d, messages %d: %d inserted, %d already present\n", st.Sessions, st.Messages, st.Inserted, st.Skipped)
			return nil
		},
	}
	cmd.Flags().IntVar(&batch, "batch-size", 1000, "records per transaction")
	return cmd
}

func newMigrateCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate [up|down|status]",
		Short: "Apply, roll back or list remstore's schema migrations",
		Long: `up (the default) applies every pending migration: the peer's tables if missing
(a no-op on a database the peer created) and remstore's indexes. down rolls
back the last group applied. status lists each migration and whether it is
applied. Never roll back the table migration on a database the peer uses: its
down step drops the tables.`,
		Example:   "  remstore migrate status --db postgres://localhost/app",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: []string{"up", "down", "status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			action := "up"
			if len(args) == 1 {
				action = args[0]
			}
			db, err := repository.OpenWith(e.ctx, e.cfg.DatabaseURL, e.pgConfig)
			if err != nil {
				return err
			}
			defer db.Close()
			m := repository.NewMigrator(db)
			if err := m.Init(e.ctx); err != nil {
				return err
			}
			switch action {
			case "up":
				if err := repository.Migrate(e.ctx, db); err != nil {
					return err
				}
			case "down":
				g, err := m.Rollback(e.ctx)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "rolled back %s\n", g)
				return nil
			case "status":
			default:
				return usageErr("migrate: %q is not up, down or status", action)
			}
			ms, err := m.MigrationsWithStatus(e.ctx)
			if err != nil {
				return err
			}
			if e.jsonOut {
				type row struct {
					Name    string `json:"name"`
					Comment string `json:"comment"`
					Applied bool   `json:"applied"`
				}
				var rows []row
				for _, x := range ms {
					rows = append(rows, row{x.Name, x.Comment, x.IsApplied()})
				}
				return writeJSON(e, rows)
			}
			for _, x := range ms {
				state := "pending"
				if x.IsApplied() {
					state = "applied"
				}
				fmt.Fprintf(e.stdout, "%s %-12s %s\n", x.Name, x.Comment, state)
			}
			return nil
		},
	}
}

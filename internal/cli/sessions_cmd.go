package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

// sessionRow is one line of a session table: id, status, agent, updated, name.
const sessionRow = "%s  %-10s %-12s %s  %s\n"

func newSessionsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, inspect and manage sessions: lifecycle, settings, fork, compaction, expiry",
	}
	c := sessionsCmds{e}
	cmd.AddCommand(c.listCmd(), c.getCmd(), c.statusCmd(), c.updateCmd(), c.delCmd(), c.popCmd(), c.clearCmd(),
		c.expireCmd(), c.forkCmd(), c.compactCmd(), c.usageCmd())
	return cmd
}

// sessionsCmds builds the subcommands of remstore sessions, one
// constructor each, around what they share.
type sessionsCmds struct{ e *env }

// withStore runs fn with the user's store, opened for writes or not, and
// says when storage is off.
func (c sessionsCmds) withStore(write bool, fn func(s *sessionstore.Store, args []string) error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		s, db, err := c.e.openStore(write)
		if err != nil {
			return err
		}
		defer db.Close()
		if err := fn(s, args); err != nil {
			return err
		}
		if !s.Enabled() {
			// pop and clear do nothing with storage off (the others
			// refuse with ErrDisabled): their null or 0 is said to be why.
			fmt.Fprintf(c.e.stderr, "remstore: note: %s: nothing was read or changed\n", c.e.storageOff())
		}
		return nil
	}
}

// printInfo prints a session as a row of the table (or JSON).
func (c sessionsCmds) printInfo(in sessionstore.SessionInfo) error {
	if c.e.jsonOut {
		return writeJSON(c.e, in)
	}
	fmt.Fprintf(c.e.stdout, sessionRow, in.ID, in.Status, orDash(in.AgentName), in.UpdatedAt.Format(time.RFC3339), in.Name)
	return nil
}

// printHeader names the columns of printInfo's rows (issue 43: a list of
// bare UUIDs and dates said nothing of what each column was).
func (c sessionsCmds) printHeader(n int) {
	if n > 0 {
		fmt.Fprintf(c.e.stdout, sessionRow, fmt.Sprintf("%-36s", "ID"), "STATUS", "AGENT", fmt.Sprintf("%-20s", "UPDATED"), "NAME")
	}
}

func (c sessionsCmds) listCmd() *cobra.Command {
	e := c.e
	var lo sessionstore.ListOptions
	var statuses string
	list := &cobra.Command{
		Use:     "list",
		Short:   "List the tenant's sessions, newest first (never loads messages)",
		Example: "  remstore sessions list --user-id alice --status active,error --limit 50\n  remstore sessions list --cursor <next_cursor> --json",
		Args:    cobra.NoArgs,
		RunE: c.withStore(readOnly, func(s *sessionstore.Store, _ []string) error {
			if statuses != "" {
				lo.Statuses = strings.Split(statuses, ",")
			}
			res, err := s.ListSessions(e.ctx, lo)
			if err != nil {
				return err
			}
			if e.jsonOut {
				return writeJSON(e, res)
			}
			c.printHeader(len(res.Sessions))
			for _, in := range res.Sessions {
				_ = c.printInfo(in)
			}
			fmt.Fprintf(e.stdout, "%d of %d", len(res.Sessions), res.Total)
			if res.NextCursor != "" {
				fmt.Fprintf(e.stdout, "; next page: --cursor %s", res.NextCursor)
			}
			fmt.Fprintln(e.stdout)
			return nil
		}),
	}
	lf := list.Flags()
	lf.StringVar(&statuses, "status", "", "statuses, comma-separated (active,completed,cancelled,error)")
	lf.StringVar(&lo.AgentName, "agent", "", "only sessions of this agent")
	lf.StringVar(&lo.UserID, "owner", "", "only sessions created for this user id")
	lf.IntVar(&lo.Limit, "limit", sessionstore.DefaultListLimit, "page size (max 500)")
	lf.StringVar(&lo.Cursor, "cursor", "", "next_cursor of the previous page")
	timeVar(lf, &lo.CreatedAfter, "created-after", "created after")
	timeVar(lf, &lo.CreatedBefore, "created-before", "created before")
	timeVar(lf, &lo.UpdatedAfter, "updated-after", "updated after")
	timeVar(lf, &lo.UpdatedBefore, "updated-before", "updated before")
	return list
}

func (c sessionsCmds) getCmd() *cobra.Command {
	e := c.e
	var noCompress bool
	get := &cobra.Command{
		Use:     "get SESSION",
		Short:   "Print a session and its messages as JSON",
		Example: "  remstore sessions get chat-1 --user-id alice --no-compress",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(readOnly, func(s *sessionstore.Store, args []string) error {
			in, h, err := s.GetSession(e.ctx, args[0], sessionstore.LoadOptions{NoCompress: noCompress})
			if err != nil {
				return err
			}
			return writeJSON(e, struct {
				Session  sessionstore.SessionInfo `json:"session"`
				Messages []models.HistoryMessage  `json:"messages"`
			}{in, h})
		}),
	}
	get.Flags().BoolVar(&noCompress, "no-compress", false, "messages in full")
	return get
}

func (c sessionsCmds) statusCmd() *cobra.Command {
	e := c.e
	var reason string
	status := &cobra.Command{
		Use:   "status SESSION active|completed|cancelled|error",
		Short: "Move a session along its lifecycle (cancel and error record --reason as a system message)",
		Long: `Allowed: active -> completed | cancelled | error, and completed -> active.
A session that is not active rejects new messages.`,
		Example: "  remstore sessions status chat-1 cancelled --user-id alice --reason 'user pressed stop'",
		Args:    cobra.ExactArgs(2),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			in, err := s.SetStatus(e.ctx, args[0], args[1], reason)
			if err != nil {
				return err
			}
			return c.printInfo(in)
		}),
	}
	status.Flags().StringVar(&reason, "reason", "", "why (recorded for cancelled and error)")
	return status
}

func (c sessionsCmds) updateCmd() *cobra.Command {
	e := c.e
	var name, agent string
	var sets []string
	update := &cobra.Command{
		Use:     "update SESSION",
		Short:   "Rename, assign an agent, or change settings (--set key=JSON-or-text, --set key= to remove)",
		Example: "  remstore sessions update chat-1 --user-id alice --agent planner --set model=gpt-4o --set thinking_level=high --set temperature=0.2",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			var u sessionstore.SessionUpdate
			if cmdChanged(e, "name") {
				u.Name = &name
			}
			if cmdChanged(e, "agent") {
				u.AgentName = &agent
			}
			for _, kv := range sets {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usageErr("--set %q: want key=value", kv)
				}
				if u.Settings == nil {
					u.Settings = map[string]any{}
				}
				var parsed any
				switch {
				case v == "":
					parsed = nil
				case json.Unmarshal([]byte(v), &parsed) != nil:
					parsed = v
				}
				u.Settings[k] = parsed
			}
			in, err := s.UpdateSession(e.ctx, args[0], u)
			if err != nil {
				return err
			}
			if e.jsonOut {
				return writeJSON(e, in)
			}
			return writeJSON(e, map[string]any{"id": in.ID, "name": in.Name, "agent_name": in.AgentName, "settings": in.Settings})
		}),
	}
	uf := update.Flags()
	uf.StringVar(&name, "name", "", "new name")
	uf.StringVar(&agent, "agent", "", "agent assigned to the session")
	uf.StringArrayVar(&sets, "set", nil, "setting key=value (value parsed as JSON when it is JSON)")
	return update
}

func (c sessionsCmds) delCmd() *cobra.Command {
	e := c.e
	var purge bool
	del := &cobra.Command{
		Use:     "delete SESSION",
		Short:   "Soft-delete a session (as the Python service does), or --purge every row of it",
		Example: "  remstore sessions delete chat-1 --user-id alice\n  remstore sessions delete chat-1 --user-id alice --purge",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			return s.DeleteSession(e.ctx, args[0], sessionstore.DeleteOptions{Purge: purge})
		}),
	}
	del.Flags().BoolVar(&purge, "purge", false, "delete the tenant's messages and the session row for good")
	return del
}

func (c sessionsCmds) popCmd() *cobra.Command {
	e := c.e
	pop := &cobra.Command{
		Use:   "pop SESSION",
		Short: "Remove the last message (soft-deleted) and print it, or null when none is left",
		Long: `Soft-deletes the --user-id tenant's last message of the session and prints it
in full as JSON, with its id and stored extras; prints null when the session
has no message left. The row stays in the table for the audit trail, and
stored REM LOOKUP keys keep naming their messages.`,
		Example: "  remstore sessions pop chat-1 --user-id alice",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			m, ok, err := s.PopMessage(e.ctx, args[0])
			if err != nil {
				return err
			}
			if !ok {
				_, err = fmt.Fprintln(e.stdout, "null")
				return err
			}
			return writeJSON(e, m)
		}),
	}
	return pop
}

func (c sessionsCmds) clearCmd() *cobra.Command {
	e := c.e
	clear := &cobra.Command{
		Use:     "clear SESSION",
		Short:   "Remove every message of the session (soft-deleted); the session stays",
		Example: "  remstore sessions clear chat-1 --user-id alice",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			n, err := s.ClearMessages(e.ctx, args[0])
			if err != nil {
				return err
			}
			return writeJSON(e, map[string]int{"removed": n})
		}),
	}
	return clear
}

func (c sessionsCmds) expireCmd() *cobra.Command {
	e := c.e
	var eo sessionstore.ExpireOptions
	expire := &cobra.Command{
		Use:     "expire --idle 30m",
		Short:   "Complete (or --purge) active sessions idle longer than --idle",
		Example: "  remstore sessions expire --user-id alice --idle 30m --dry-run\n  remstore sessions expire --idle 24h --purge",
		Args:    cobra.NoArgs,
		RunE: c.withStore(writes, func(s *sessionstore.Store, _ []string) error {
			got, err := s.Expire(e.ctx, eo)
			if err != nil {
				return err
			}
			if e.jsonOut {
				return writeJSON(e, got)
			}
			verb := map[bool]string{true: "would expire", false: "expired"}[eo.DryRun]
			c.printHeader(len(got))
			for _, in := range got {
				_ = c.printInfo(in)
			}
			fmt.Fprintf(e.stdout, "%s %d sessions\n", verb, len(got))
			return nil
		}),
	}
	ef := expire.Flags()
	ef.DurationVar(&eo.Idle, "idle", 30*time.Minute, "idle time after which a session expires")
	ef.BoolVar(&eo.Purge, "purge", false, "delete instead of marking completed")
	ef.BoolVar(&eo.DryRun, "dry-run", false, "only list what would expire")
	return expire
}

func (c sessionsCmds) forkCmd() *cobra.Command {
	e := c.e
	var fo sessionstore.ForkOptions
	fork := &cobra.Command{
		Use:     "fork SESSION",
		Short:   "Copy a session (up to message n) into a new session with fresh keys",
		Example: "  remstore sessions fork chat-1 --user-id alice --up-to 6 --new-session-id chat-1-branch",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			in, err := s.Fork(e.ctx, args[0], fo)
			if err != nil {
				return err
			}
			return writeJSON(e, in)
		}),
	}
	fork.Flags().IntVar(&fo.UpTo, "up-to", 0, "copy the first n messages (0 = all)")
	fork.Flags().StringVar(&fo.NewSessionKey, "new-session-id", "", "id of the new session (default: a new UUID)")
	return fork
}

func (c sessionsCmds) compactCmd() *cobra.Command {
	e := c.e
	var co sessionstore.CompactOptions
	compact := &cobra.Command{
		Use:   "compact SESSION",
		Short: "Append a summary of all but the last --keep-last messages (originals stay recoverable)",
		Long: `Summarizes the history before the last --keep-last messages with a deterministic
summarizer (roles and first words; library callers pass their own, e.g. an LLM)
and appends it. Loads then return the summary and what follows it; every
earlier message stays in the table and recoverable by its REM LOOKUP key. A
tool call is never separated from its results. With nothing to compact it says
so and exits 0.`,
		Example: "  remstore sessions compact chat-1 --user-id alice --keep-last 6",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(writes, func(s *sessionstore.Store, args []string) error {
			m, err := s.Compact(e.ctx, args[0], sessionstore.DeterministicSummary, co)
			if errors.Is(err, sessionstore.ErrNothingToCompact) {
				// A no-op, not a failure: exit 0 and say so.
				_, err = fmt.Fprintf(e.stdout, "nothing to compact: the session has no more than --keep-last %d messages\n", co.KeepLast)
				return err
			}
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.stdout, m.Content)
			return err
		}),
	}
	compact.Flags().IntVar(&co.KeepLast, "keep-last", 6, "messages kept after the summary")
	return compact
}

func (c sessionsCmds) usageCmd() *cobra.Command {
	e := c.e
	usage := &cobra.Command{
		Use:     "usage SESSION",
		Short:   "Sum the token usage stored with the session's messages",
		Example: "  remstore sessions usage chat-1 --user-id alice",
		Args:    cobra.ExactArgs(1),
		RunE: c.withStore(readOnly, func(s *sessionstore.Store, args []string) error {
			u, err := s.SessionUsage(e.ctx, args[0])
			if err != nil {
				return err
			}
			return writeJSON(e, u)
		}),
	}
	return usage
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// cmdChanged reports whether a flag of the running command was given.
func cmdChanged(e *env, name string) bool { return e.changed[name] }

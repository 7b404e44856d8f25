package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/remstore/remstore/audit"
)

func newAuditCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Read the DEBUG_AUDIT_SESSION dumps of what each agent call saw",
	}
	var dir string
	show := &cobra.Command{
		Use:   "show SESSION",
		Short: "Print a session's audit invocations (time, agent, prompt, counts, history)",
		Long: `Prints every invocation recorded for the session: when, which agent, the prompt,
how many history messages were loaded and how many pydantic-ai messages they
became, then the history with compressed messages marked. --json prints the
file's content as JSON.

Each session has one file, named by its UUID: <uuid>.yaml in the audit
directory. Give the session's name (chat-1) with --user-id, as for load, and
show looks its UUID up in the database; give the UUID and it reads the file
without the database.`,
		Example: "  remstore audit show chat-1 --user-id alice\n" +
			"  remstore audit show 550e8400-e29b-41d4-a716-446655440000 --dir /tmp/audit",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = e.cfg.AuditDir
			}
			typed := args[0]
			sid, err := e.auditSessionID(typed)
			if err != nil {
				return err
			}
			f, err := audit.Read(dir, sid)
			if errors.Is(err, fs.ErrNotExist) {
				what := fmt.Sprintf("session %q", typed)
				if sid != typed {
					what = fmt.Sprintf("session %q of user %q (%s)", typed, e.cfg.UserID, sid)
				}
				return &exitError{ExitNotFound, fmt.Errorf("no audit file for %s in %s", what, dir)}
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if e.jsonOut {
				return writeJSON(e, f)
			}
			w := e.stdout
			fmt.Fprintf(w, "session %s: %s (%s)\n", f.SessionID, plural(len(f.Invocations), "invocation"), audit.Path(dir, sid))
			if f.Unread > 0 {
				fmt.Fprintf(w, "   (%s set aside for it not read: with them the dump is past its bound)\n", plural(f.Unread, "invocation"))
			}
			for i, inv := range f.Invocations {
				fmt.Fprintf(w, "\n#%d %v  agent=%v  history=%v  pydantic=%v\n   prompt: %s\n", i+1, inv["timestamp"], inv["agent_name"],
					inv["raw_history_count"], inv["pydantic_messages_count"], oneLine(fmt.Sprint(inv["prompt"])))
				hist, _ := inv["raw_session_history"].([]any)
				for j, h := range hist {
					m, _ := h.(map[string]any)
					mark := "  "
					if m["_compressed"] == true {
						mark = "✂ "
					}
					content := oneLine(fmt.Sprint(m["content"]))
					if r := []rune(content); len(r) > 100 {
						content = string(r[:100]) + "…"
					}
					fmt.Fprintf(w, "   %s%2d %-9v %s\n", mark, j, m["role"], content)
					if k, ok := m["_entity_key"].(string); ok {
						fmt.Fprintf(w, "         REM LOOKUP %s (%v chars)\n", k, m["_original_length"])
					}
				}
			}
			return nil
		},
	}
	show.Flags().StringVar(&dir, "dir", "", "audit directory (default DEBUG_AUDIT_DIR, else $XDG_STATE_HOME/remstore/audit or ~/.local/state/remstore/audit)")
	cmd.AddCommand(show)
	return cmd
}

// auditSessionID is the UUID a session's audit dump is named by: a UUID as
// typed (no database needed), a name resolved for --user-id as every
// writer of a dump resolves it (sessionstore.Store.ResolveID).
func (e *env) auditSessionID(typed string) (string, error) {
	if id, err := uuid.Parse(typed); err == nil {
		return id.String(), nil
	}
	s, db, err := e.openStore(readOnly)
	if err != nil {
		return "", err
	}
	defer db.Close()
	id, err := s.ResolveID(e.ctx, typed)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"

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
file's content as JSON.`,
		Example: "  remstore audit show 550e8400-e29b-41d4-a716-446655440000 --dir /tmp/audit",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = e.cfg.AuditDir
			}
			f, err := audit.Read(dir, args[0])
			if errors.Is(err, fs.ErrNotExist) {
				return &exitError{ExitNotFound, fmt.Errorf("no audit file for session %q in %s", args[0], dir)}
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if e.jsonOut {
				return writeJSON(e, f)
			}
			w := e.stdout
			fmt.Fprintf(w, "session %s: %s (%s)\n", f.SessionID, plural(len(f.Invocations), "invocation"), audit.Path(dir, args[0]))
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

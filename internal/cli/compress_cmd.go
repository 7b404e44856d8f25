package cli

import (
	"github.com/spf13/cobra"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

func newCompressCmd(e *env) *cobra.Command {
	var sessionID string
	cmd := &cobra.Command{
		Use:   "compress --session-id ID",
		Short: "Apply load-time compression to a JSON history read on stdin",
		Long: `Reads a JSON array of history messages on stdin and writes it back with every
assistant message longer than 2T code points cut to its first and last T code
points around a REM LOOKUP hint. The key of element i is session-{UUID}-msg-{i},
UUID being the session's id as the store maps it for --user-id (a UUID is
itself), so the keys are the ones a store under that user would resolve. Other
keys of each message pass through unchanged. No database is used.`,
		Example: `  echo '[{"role":"assistant","content":"..."}]' | remstore compress --session-id abc --truncate-length 50`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := compressor.New(e.cfg.TruncateLength)
			if err != nil {
				return usageErr("--truncate-length: %v", err)
			}
			msgs, err := e.readHistory()
			if err != nil {
				return err
			}
			sid, err := sessionstore.SessionUUID(e.cfg.UserID, sessionID)
			if err != nil {
				return usageErr("--session-id: %v", err)
			}
			out, err := c.CompressHistory(sid.String(), msgs)
			if err != nil {
				return usageErr("stdin: %v", err)
			}
			return models.EncodeHistory(e.stdout, out)
		},
	}
	cmd.Flags().StringVar(&sessionID, "session-id", "", "session id, mapped for --user-id as the store maps it (required)")
	_ = cmd.MarkFlagRequired("session-id")
	return cmd
}

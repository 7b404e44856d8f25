package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

func newEnvCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "env",
		Short:   "Print the settings in effect and where each came from (secrets masked)",
		Example: "  remstore env\n  REMSTORE_DB=postgres://u:pw@db/app remstore env --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows := e.cfg.Shown()
			if e.jsonOut {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"settings": rows, "dotenv": e.cfg.DotEnvPath, "warnings": e.cfg.Warnings})
			}
			for _, r := range rows {
				fmt.Fprintf(e.stdout, "%-30s %-50s %s\n", r.Name, r.Value, r.Source)
			}
			if e.cfg.DotEnvPath != "" {
				fmt.Fprintf(e.stdout, "\n.env file: %s\n", e.cfg.DotEnvPath)
			}
			return nil
		},
	}
}

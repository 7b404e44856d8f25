package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/settings"
)

func newEnvCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "env",
		Short:   "Print the settings in effect and where each came from (secrets masked)",
		Example: "  remstore env\n  REMSTORE_DB=postgres://u:pw@db/app remstore env --json",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c := e.cfg
			rows := [][3]string{
				{settings.KeyDB, settings.MaskURL(c.DatabaseURL), c.Sources[settings.KeyDB]},
				{settings.KeyPostgresEnabled, strconv.FormatBool(c.StorageEnabled), c.Sources[settings.KeyPostgresEnabled]},
				{settings.KeyUserID, c.UserID, c.Sources[settings.KeyUserID]},
				{settings.KeyTruncateLength, strconv.Itoa(c.TruncateLength), c.Sources[settings.KeyTruncateLength]},
				{settings.KeyAPIKeys, maskKeys(c.APIKeys), c.Sources[settings.KeyAPIKeys]},
				{settings.KeyAuditSession, strconv.FormatBool(c.AuditEnabled), c.Sources[settings.KeyAuditSession]},
				{settings.KeyAuditDir, c.AuditDir, c.Sources[settings.KeyAuditDir]},
				{settings.KeyLogLevel, c.LogLevel, c.Sources[settings.KeyLogLevel]},
				{settings.KeyConnectTimeout, c.ConnectTimeout.String(), c.Sources[settings.KeyConnectTimeout]},
				{settings.KeyStatementTimeout, c.StatementTimeout.String(), c.Sources[settings.KeyStatementTimeout]},
			}
			if e.jsonOut {
				out := []map[string]string{}
				for _, r := range rows {
					out = append(out, map[string]string{"name": r[0], "value": r[1], "source": r[2]})
				}
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"settings": out, "dotenv": c.DotEnvPath, "warnings": c.Warnings})
			}
			for _, r := range rows {
				fmt.Fprintf(e.stdout, "%-28s %-50s %s\n", r[0], r[1], r[2])
			}
			if c.DotEnvPath != "" {
				fmt.Fprintf(e.stdout, "\n.env file: %s\n", c.DotEnvPath)
			}
			return nil
		},
	}
}

// maskKeys shows how many API keys are set and the users they bind, never a key.
func maskKeys(raw string) string {
	if strings.TrimSpace(raw) == "" {
		return ""
	}
	n := 0
	for _, k := range strings.Split(raw, ",") {
		if strings.TrimSpace(k) != "" {
			n++
		}
	}
	return fmt.Sprintf("(%d keys, masked)", n)
}

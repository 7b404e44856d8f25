package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/settings"
)

// newHealthCmd asks a running serve whether it is alive. The container
// image's HEALTHCHECK runs it: the image has no shell and no curl.
func newHealthCmd(e *env) *cobra.Command {
	var url string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Check that a remstore serve answers (exit 0) and print its version",
		Long: `Sends GET /healthz to a running remstore serve and prints its answer. The
server is --url, else REMSTORE_URL, else the loopback form of REMSTORE_ADDR
(http://127.0.0.1:8088 by default). Exit 0 when it answers ok, 3 when it does
not answer or answers anything else within --timeout.`,
		Example: "  remstore health\n  remstore health --url http://127.0.0.1:8088",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name := "--url"
			if !cmd.Flags().Changed("url") {
				url, name = e.cfg.URL, e.cfg.Origin(settings.KeyURL)
				if e.cfg.Sources[settings.KeyURL] == "default" {
					name = e.cfg.Origin(settings.KeyAddr)
				}
			}
			if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
				return usageErr("%s %q: not an http:// or https:// URL", name, url)
			}
			ctx, cancel := context.WithTimeout(e.ctx, timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(url, "/")+"/healthz", nil)
			if err != nil {
				return usageErr("%s %q: %v", name, url, err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return &exitError{ExitUnavailable, fmt.Errorf("%s (%s): %w", url, name, err)}
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			var h struct{ Status, Version string }
			if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" {
				return &exitError{ExitUnavailable, fmt.Errorf("%s/healthz answered %s: %q", url, resp.Status, oneLine(string(body)))}
			}
			fmt.Fprintf(e.stdout, "ok %s %s\n", url, h.Version)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "the server's base URL (env REMSTORE_URL)")
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "give up after this long")
	return cmd
}

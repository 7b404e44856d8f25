package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/fixtures"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

func newDemoCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "demo",
		Short: "Store a multi-agent conversation, load it compressed, recover the cut text, convert it",
		Long: `Runs the whole cycle on the configured database (the embedded SQLite file when
nothing is configured): store a realistic multi-agent conversation, load it
back with the long answer cut to a REM LOOKUP hint, recover the full text by
its key, and print the pydantic-ai history. Each run uses a new session.`,
		Example: "  remstore demo\n  remstore demo --db postgres://localhost/app",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start := time.Now()
			w := e.stdout
			step := func(n int, title string) { fmt.Fprintf(w, "\n== %d. %s\n", n, title) }
			msgs, err := models.DecodeHistory(fixtures.DemoConversation)
			if err != nil {
				return err
			}
			s, db, err := e.openStore(writes)
			if err != nil {
				return err
			}
			defer db.Close()
			if !s.Enabled() {
				return usageErr("%s is not true: storage is off, nothing to show", settings.KeyPostgresEnabled)
			}
			session := fmt.Sprintf("demo-%d", time.Now().UnixNano())
			fmt.Fprintf(w, "remstore demo on %s (user %q, session %q)\n", settings.MaskURL(e.cfg.DatabaseURL), e.cfg.UserID, session)

			step(1, fmt.Sprintf("store %s in one transaction (full text, for audit)", plural(len(msgs), "message")))
			res, err := s.Store(e.ctx, session, msgs, sessionstore.StoreOptions{})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "session uuid %s; keys %s ... %s\n", res.SessionID, res.Keys[0], res.Keys[len(res.Keys)-1])

			step(2, "load the history for the next turn (long assistant answers cut)")
			hist, err := s.Load(e.ctx, session, sessionstore.LoadOptions{})
			if err != nil {
				return err
			}
			var cut *models.HistoryMessage
			for i := range hist {
				m := &hist[i]
				mark := ""
				if m.Compressed {
					mark = fmt.Sprintf("  [cut from %d chars]", m.OriginalLength)
					if cut == nil {
						cut = m
					}
				}
				fmt.Fprintf(w, "%2d %-9s %4d chars%s\n", i, m.Role, len([]rune(m.Content)), mark)
			}
			if cut == nil {
				return fmt.Errorf("no message was long enough to cut (truncate length %d)", e.cfg.TruncateLength)
			}

			step(3, "what the agent sees in place of the long answer")
			i := strings.Index(cut.Content, "... [")
			j := strings.Index(cut.Content, "] ...")
			fmt.Fprintf(w, "%s\n", cut.Content[i:j+5])

			step(4, "REM LOOKUP "+cut.EntityKey)
			full, err := s.Lookup(e.ctx, "REM LOOKUP "+cut.EntityKey)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "recovered %d chars; equal to the stored text: %v\n", len([]rune(full)), full == msgs[indexOf(hist, cut)].Content)
			if _, err := compressor.ParseKey(cut.EntityKey); err != nil {
				return err
			}

			step(5, "pydantic-ai history (tool calls synthesized), for agent.run(message_history=...)")
			out, err := convert.JSON(hist, convert.Options{SystemPrompt: demoSystemPrompt})
			if err != nil {
				return err
			}
			conv := convert.Convert(hist, convert.Options{SystemPrompt: demoSystemPrompt})
			for _, m := range conv {
				var kinds []string
				for _, p := range m.Parts {
					kinds = append(kinds, p.PartKind)
				}
				fmt.Fprintf(w, "%-8s %s\n", m.Kind, strings.Join(kinds, ", "))
			}
			fmt.Fprintf(w, "(%d bytes of JSON)\n", len(out))
			fmt.Fprintf(w, "\ndone in %s\n", time.Since(start).Round(time.Millisecond))
			self := selfCommand(os.Args[0])
			if e.cfg.Sources[settings.KeyDB] == "flag" { // the same database, or the steps find nothing
				if masked := settings.MaskURL(e.cfg.DatabaseURL); masked == e.cfg.DatabaseURL {
					self += " --db " + shellQuote(e.cfg.DatabaseURL)
				} else { // never a password on the screen: the user knows what they gave
					self += " --db <the same --db>"
				}
			}
			fmt.Fprintf(w, "\nnext, from this shell:\n  %s load --session-id %s --format pydantic-ai --system-prompt %q   # the history above, as JSON\n", self, session, demoSystemPrompt)
			fmt.Fprintf(w, "  %s lookup %q\n", self, cut.EntityKey)
			if strings.HasPrefix(self, "go run") {
				fmt.Fprintf(w, "  go install ./cmd/remstore   # then plain `remstore ...` from anywhere (in $(go env GOPATH)/bin)\n")
			}
			return nil
		},
	}
}

// demoSystemPrompt is the system prompt of the demo's pydantic-ai history.
const demoSystemPrompt = "You are a travel assistant."

// selfCommand is how the user who ran this binary runs it again: a binary
// `go run` built lives in Go's temporary build directory
// (/tmp/go-build*/b001/exe/) or, from the second run on, in its build cache
// (<GOCACHE>/<2 hex>/<64 hex>-d/), wherever GOCACHE points; neither is a
// command to type, so the next step is `go run ./cmd/remstore` there (the
// demo's hint named `remstore load`, not on PATH after `go run`), and the
// name it was started by otherwise.
var goRunCached = regexp.MustCompile(`/[0-9a-f]{2}/[0-9a-f]{64}-d/[^/]+$`)

func selfCommand(argv0 string) string {
	if strings.Contains(argv0, string(filepath.Separator)+"go-build") || goRunCached.MatchString(filepath.ToSlash(argv0)) {
		return "go run ./cmd/remstore"
	}
	if filepath.Base(argv0) == argv0 || argv0 == "" {
		return "remstore"
	}
	return argv0
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func indexOf(hist []models.HistoryMessage, m *models.HistoryMessage) int {
	for i := range hist {
		if &hist[i] == m {
			return i
		}
	}
	return -1
}

package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
)

func newSearchCmd(e *env) *cobra.Command {
	var o sessionstore.SearchOptions
	var create, drop bool
	var after, before string
	cmd := &cobra.Command{
		Use:   "search [QUERY] [--in content|tool|key|agent]",
		Short: "Search the user's sessions by words, tool name, agent or REM LOOKUP key",
		Long: `Finds the --user-id user's live messages: by the words of their content (every
word of QUERY, or a word it begins, in any case), by part of a tool name or an
agent name, or by a REM LOOKUP key; newest first, each with its session, role,
time and the text around the match. The viewer's search (/ui/search) is the
same.

On PostgreSQL content search uses an index that is not made by default: it
makes every write dearer (docs/performance.md#search). --create-index builds it
without blocking writes (CREATE INDEX CONCURRENTLY); --drop-index drops it.
Without it a search reads the whole table. SQLite always has its index.`,
		Example: "  remstore search --user-id alice lisbon trip\n" +
			"  remstore search --user-id alice --in tool search_flights --json\n" +
			"  remstore search --create-index --db postgres://localhost/app",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Query = strings.Join(args, " ")
			if create && drop {
				return usageErr("--create-index and --drop-index: one at a time")
			}
			if create || drop {
				if len(args) > 0 {
					return usageErr("--create-index and --drop-index take no QUERY")
				}
				db, err := e.openDB(writes)
				if err != nil {
					return err
				}
				defer db.Close()
				if create {
					err = migrations.EnableSearch(e.ctx, db)
				} else {
					err = migrations.DisableSearch(e.ctx, db)
				}
				if err != nil {
					return err
				}
				on, err := migrations.SearchIndexed(e.ctx, db)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "search index: %s\n", map[bool]string{true: "present", false: "absent"}[on])
				return nil
			}
			if len(args) == 0 {
				return usageErr("give a QUERY (or --create-index / --drop-index)")
			}
			s, db, err := e.openStore(readOnly)
			if err != nil {
				return err
			}
			defer db.Close()
			for _, tf := range []struct {
				flag, v string
				to      *time.Time
			}{{"--after", after, &o.After}, {"--before", before, &o.Before}} {
				if tf.v == "" {
					continue
				}
				t, err := time.Parse(time.RFC3339Nano, tf.v)
				if err != nil {
					return usageErr("%s: %q is not an RFC 3339 time (like 2025-05-01T09:00:00Z)", tf.flag, tf.v)
				}
				*tf.to = t
			}
			res, err := s.SearchPage(e.ctx, o)
			if err != nil {
				if fe, ok := models.AsFieldError(err); ok && fe.Field == "q" {
					return usageErr("QUERY: %s", fe.Reason)
				}
				return err
			}
			hits := res.Hits
			if res.More { // said beside the hits, which stay a list
				fmt.Fprintf(e.stderr, "remstore: more hits follow: --offset %d\n", o.Offset+o.Limit)
			}
			if e.jsonOut {
				if hits == nil {
					hits = []sessionstore.SearchHit{}
				}
				return writeJSON(e, hits)
			}
			return printHits(e, hits)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.In, "in", sessionstore.SearchContent, "what to search: content, tool, key or agent")
	f.IntVar(&o.Limit, "limit", sessionstore.DefaultSearchLimit, fmt.Sprintf("results at most (up to %d)", sessionstore.MaxSearchLimit))
	f.IntVar(&o.Offset, "offset", 0, "results to skip, newest first (content and tool searches): the next page")
	f.StringVar(&o.Role, "role", "", "only messages of this role (content and tool searches)")
	f.StringVar(&o.Session, "session-id", "", "only messages of this session, by key or UUID (content and tool searches)")
	f.StringVar(&o.Agent, "agent", "", "only messages of sessions whose agent name holds this, any case (content and tool searches)")
	f.StringVar(&after, "after", "", "only messages stored at or after this RFC 3339 time")
	f.StringVar(&before, "before", "", "only messages stored before this RFC 3339 time")
	f.BoolVar(&create, "create-index", false, "PostgreSQL: build content search's index (without blocking writes)")
	f.BoolVar(&drop, "drop-index", false, "PostgreSQL: drop content search's index")
	return cmd
}

// printHits writes search hits as a table, or says nothing was found.
func printHits(e *env, hits []sessionstore.SearchHit) error {
	if len(hits) == 0 {
		fmt.Fprintf(e.stderr, "remstore: note: nothing found for user %q\n", e.cfg.UserID)
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tROLE\tTIME\tTEXT")
	for _, h := range hits {
		name := h.SessionName
		if name == "" {
			name = h.SessionID.String()
		}
		text := strings.Join(strings.Fields(h.Snippet), " ")
		if h.ToolName != "" {
			text = h.ToolName + ": " + text
		}
		if h.Role == "" {
			text = "agent " + h.AgentName
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, h.Role, h.Timestamp, text)
	}
	return tw.Flush()
}

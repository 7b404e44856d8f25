package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
)

func newSearchCmd(e *env) *cobra.Command {
	var o sessionstore.SearchOptions
	var index bool
	var after, before string
	cmd := &cobra.Command{
		Use:   "search [QUERY] [--in content|tool|key|agent]",
		Short: "Search the user's sessions by words, tool name, agent or REM LOOKUP key",
		Long: `Finds the --user-id user's live messages: by the words of their content (every
word of QUERY, or a word it begins, in any case), by part of a tool name or an
agent name, or by a REM LOOKUP key; newest first, each with its session, role,
time and the text around the match. The viewer's search (/ui/search) is the
same.

What a word is is one rule on every database: letters and digits, any case,
accents ignored ("cafe" finds "Café"); a CJK character or an emoji is a word of
its own; an e-mail address or a URL is the words in it. Content search reads an
index that needs no set-up. On PostgreSQL it is written beside the write path,
not in it: serve keeps it up to date in the background, and a search first
indexes what waits (for a quarter of a second at most, then says when recent
messages may be missing). --index indexes everything waiting now, as after an
import of many messages.`,
		Example: "  remstore search --user-id alice lisbon trip\n" +
			"  remstore search --user-id alice --in tool search_flights --json\n" +
			"  remstore search --index --db postgres://localhost/app",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Query = strings.Join(args, " ")
			if index {
				if len(args) > 0 {
					return usageErr("--index takes no QUERY")
				}
				db, err := e.openDB(writes)
				if err != nil {
					return err
				}
				defer db.Close()
				r, err := sessionstore.IndexSearch(e.ctx, db, 0)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "search index: up to date (%d messages indexed)\n", r.Indexed)
				return nil
			}
			if len(args) == 0 {
				return usageErr("give a QUERY (or --index)")
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
			if res.Indexing {
				fmt.Fprintln(e.stderr, "remstore: note: the search index is catching up: messages stored in the last moments may be missing (remstore search --index)")
			}
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
	f.StringVar(&o.Tool, "tool", "", "only the results of a tool whose name holds this, any case, and the answers that called one (content and tool searches)")
	f.StringVar(&after, "after", "", "only messages stored at or after this RFC 3339 time")
	f.StringVar(&before, "before", "", "only messages stored before this RFC 3339 time")
	f.BoolVar(&index, "index", false, "PostgreSQL: index every message waiting for search's index now")
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

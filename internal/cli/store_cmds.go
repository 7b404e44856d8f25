package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/spf13/cobra"

	"github.com/remstore/remstore/audit"
	"github.com/remstore/remstore/convert"
	"github.com/remstore/remstore/internal/msgcheck"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/repository"
	"github.com/remstore/remstore/repository/migrations"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

// Access modes of openDB: a command that only reads never migrates and never
// creates a file or a table (DESIGN §14); one that writes migrates first.
const (
	readOnly = false
	writes   = true
)

// openDB opens the configured database. With writes it creates the default
// SQLite file (and only the default's directory) and migrates; read-only it
// checks that remstore's tables exist and says what to run when they do not.
// The caller closes it.
func (e *env) openDB(write bool) (*repository.DB, error) {
	isDefault := e.cfg.Sources[settings.KeyDB] == "default"
	db, err := repository.OpenWith(e.ctx, e.cfg.DatabaseURL, repository.Options{
		Configure: e.pgConfig, ReadOnly: !write, CreateDir: isDefault})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.cfg.Origin(settings.KeyDB), err)
	}
	if write {
		var applied []string
		// Replicas starting together take turns: one migrates, the others
		// wait for it (at most migrations.DefaultLockWait) and say so.
		applied, err = migrations.ApplyWith(e.ctx, db, migrations.Options{Waiting: func(what string) {
			e.log.Info("waiting for another process to migrate the database", "lock", what, "at_most", migrations.DefaultLockWait.String())
		}})
		if err != nil {
			err = fmt.Errorf("%w: %v", repository.ErrUnavailable, err)
		} else if len(applied) > 0 {
			// Said at info level: serve logs it, a one-shot command stays quiet.
			e.log.Info("migrated the database", "db", settings.MaskURL(e.cfg.DatabaseURL), "applied", len(applied), "last", applied[len(applied)-1])
		}
	} else {
		err = migrations.Check(e.ctx, db)
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// openStores opens the database (see openDB) and builds the stores from
// the settings, as every surface takes them. The caller closes the DB.
func (e *env) openStores(write bool) (*sessionstore.Stores, *repository.DB, error) {
	db, err := e.openDB(write)
	if err != nil {
		return nil, nil, err
	}
	stores, err := sessionstore.FromSettings(db, e.cfg)
	if err != nil {
		_ = db.Close()
		return nil, nil, usageErr("%v", err)
	}
	return stores, db, nil
}

// openStore is openStores bound to the configured user id.
func (e *env) openStore(write bool) (*sessionstore.Store, *repository.DB, error) {
	stores, db, err := e.openStores(write)
	if err != nil {
		return nil, nil, err
	}
	s, err := stores.For(e.cfg.UserID)
	if err != nil {
		_ = db.Close()
		return nil, nil, usageErr("%v", err)
	}
	if e.cfg.Sources[settings.KeyUserID] == "default" {
		// The default is the Python service's, kept for interop; said each
		// time so a later load as a named user finding nothing is no
		// mystery (issue 43).
		fmt.Fprintf(e.stderr, "remstore: acting as user %q (no --user-id or %s)\n", e.cfg.UserID, settings.KeyUserID)
	}
	return s, db, nil
}

// pgConfig applies the timeout settings to a PostgreSQL connection.
func (e *env) pgConfig(c *pgx.ConnConfig) {
	c.ConnectTimeout = e.cfg.ConnectTimeout
	if e.cfg.StatementTimeout > 0 {
		c.RuntimeParams["statement_timeout"] = strconv.FormatInt(e.cfg.StatementTimeout.Milliseconds(), 10)
	}
}

func writeJSON(e *env, v any) error {
	enc := json.NewEncoder(e.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func newStoreCmd(e *env) *cobra.Command {
	var sessionID, format, expectLast string
	cmd := &cobra.Command{
		Use:   "store --session-id ID",
		Short: "Store a JSON array of history messages read on stdin, in one transaction",
		Long: `Reads a JSON array of history messages (docs/concepts.md) on stdin and stores them,
uncompressed, as the next messages of the session: all or nothing. Prints
{"session_id": "<uuid>", "stored": N, "keys": [...], "last": "<id>"}. A
session id that is not a UUID is mapped to UUIDv5 in remstore's namespace.

--expect-last guards the store: the session's last message as you loaded it
("load --print-last", or "last" of the previous store; "empty" for a session
without messages). When the session moved on since, nothing is stored and the
command exits 2 naming the session's last message now.

With --format pydantic-ai, stdin is pydantic-ai's message JSON instead (what
result.new_messages_json() writes, 1.42 or 2.x): each request becomes one
message per system, user, tool-return and retry part, each response one
assistant message, and what a message cannot hold is kept so that
"load --format pydantic-ai" gives the messages back part for part. An unknown
part kind or a malformed part exits 2 naming the message and part.`,
		Example: "  echo '[{\"role\":\"user\",\"content\":\"Hi\"}]' | remstore store --session-id chat-1 --user-id alice\n" +
			"  python agent.py | remstore store --session-id chat-1 --user-id alice --format pydantic-ai\n" +
			"  echo '[{\"role\":\"user\",\"content\":\"Hi\"}]' | remstore store --session-id chat-1 --user-id alice --expect-last empty",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var msgs []models.HistoryMessage
			locate := func(err error) error { return err }
			decoded := false // convert.DecodePydanticAI's rows (StoreOptions.Decoded)
			switch format {
			case "dicts":
				var err error
				if msgs, err = e.readHistory(); err != nil {
					return err
				}
			case "pydantic-ai":
				in, err := e.readInput("stdin")
				if err != nil {
					return err
				}
				ing, err := convert.DecodePydanticAI(bytes.NewReader(in))
				if err != nil {
					return usageErr("stdin: %v", err)
				}
				msgs, locate, decoded = ing.Messages, ing.Locate, true
			default:
				return usageErr("--format: %q is not dicts or pydantic-ai", format)
			}
			// Checked before the database is opened: bad input is exit 2
			// whether or not a database is there.
			if err := msgcheck.Messages(msgs, decoded); err != nil {
				return locate(err)
			}
			s, db, err := e.openStore(writes)
			if err != nil {
				return err
			}
			defer db.Close()
			res, err := s.Store(e.ctx, sessionID, msgs, sessionstore.StoreOptions{ExpectLast: expectLast, Decoded: decoded})
			if err != nil {
				return locate(err)
			}
			if !s.Enabled() { // SPEC §7: the messages back, nothing stored; said, not silent
				fmt.Fprintf(e.stderr, "remstore: %s: nothing was stored\n", e.storageOff())
			}
			return writeJSON(e, res.Answer(len(msgs), s.Enabled()))
		},
	}
	cmd.Flags().StringVar(&sessionID, "session-id", "", "session id or key (required)")
	cmd.Flags().StringVar(&format, "format", "dicts", "dicts (history messages) or pydantic-ai (pydantic-ai's message JSON)")
	cmd.Flags().StringVar(&expectLast, "expect-last", "", `store only if the session's last message is this one (an id from "load --print-last" or a store's "last", or "empty")`)
	_ = cmd.MarkFlagRequired("session-id")
	return cmd
}

func newLoadCmd(e *env) *cobra.Command {
	var o struct {
		sessionID, format, systemPrompt, agentName, prompt string
		noCompress, extras, strict, printLast              bool
		last                                               int
	}
	cmd := &cobra.Command{
		Use:   "load --session-id ID",
		Short: "Print a session's history, long assistant messages cut with REM LOOKUP keys",
		Long: `Prints the tenant's messages of the session in order as a JSON array of history
messages (docs/concepts.md). Assistant messages longer than 2T code points are cut to a
REM LOOKUP hint unless --no-compress. With --format pydantic-ai the history is
converted to pydantic-ai's message JSON: messages stored with --format
pydantic-ai come back part for part, others get their tool calls synthesized
from the tool messages; then, when
DEBUG_AUDIT_SESSION is set, what the agent saw is appended to the session's
audit file (--agent-name and --prompt name the call).`,
		Example: "  remstore load --session-id chat-1 --user-id alice\n" +
			"  remstore load --session-id chat-1 --user-id alice --format pydantic-ai --system-prompt 'You are helpful.'",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.format != "dicts" && o.format != "pydantic-ai" {
				return usageErr("--format: %q is not dicts or pydantic-ai", o.format)
			}
			s, db, err := e.openStore(readOnly)
			if err != nil {
				return err
			}
			defer db.Close()
			if o.last < 0 {
				return usageErr("--last: must be >= 0")
			}
			lo := sessionstore.LoadOptions{NoCompress: o.noCompress, Extras: o.extras, Sources: o.format == "pydantic-ai", LastN: o.last}
			if o.printLast {
				lo.OnLast = func(last string) { fmt.Fprintf(e.stderr, "remstore: last message %s\n", last) }
			}
			loaded := 0
			each := func(fn func(models.HistoryMessage) error) error {
				return s.LoadEach(e.ctx, o.sessionID, lo, func(m models.HistoryMessage) error { loaded++; return fn(m) })
			}
			// The output stays [] for the middleware; the person is told why.
			defer func() {
				if loaded == 0 {
					e.noteEmpty(s, o.sessionID)
				}
			}()
			if o.format == "dicts" { // streamed: memory stays flat however long the session
				enc := models.NewHistoryEncoder(e.stdout)
				if err := each(enc.Encode); err != nil {
					return err
				}
				return enc.Close()
			}
			var left convert.Unmappeds
			co := convert.Options{SystemPrompt: o.systemPrompt, Strict: o.strict, OnUnmapped: left.Add}
			defer e.warnUnmapped(&left)
			var call *audit.Call
			if e.cfg.AuditEnabled {
				// The dump is named by the session's UUID, as `audit show`
				// finds it: never by the name as typed.
				if sid, err := s.ResolveID(e.ctx, o.sessionID); err == nil {
					call = &audit.Call{Dir: e.cfg.AuditDir, SessionID: sid.String(), AgentName: o.agentName, Prompt: o.prompt}
				} else {
					fmt.Fprintf(e.stderr, "remstore: warning: the call is not recorded in the audit dump: %s\n", oneLine(err.Error()))
				}
			}
			return audit.WritePydanticAI(e.ctx, e.stdout, co, call, each, func() ([]models.HistoryMessage, error) {
				hist, err := s.Load(e.ctx, o.sessionID, lo)
				loaded = len(hist)
				return hist, err
			}, nil)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.strict, "strict", false, "with --format pydantic-ai: exit 2 when a message cannot be converted (a role the Python service wrote that pydantic-ai has no form for) instead of leaving it out with a warning")
	f.StringVar(&o.sessionID, "session-id", "", "session id or key (required)")
	f.BoolVar(&o.noCompress, "no-compress", false, "return every message in full")
	f.IntVar(&o.last, "last", 0, "only the last N messages (a tool result whose call falls before them is left out with it); 0 means all")
	f.BoolVar(&o.printLast, "print-last", false, "print the session's last message on stderr (remstore: last message <id>), for store --expect-last")
	f.BoolVar(&o.extras, "extras", false, "add author, tool_calls, usage, model, reasoning, trace_id, span_id, pydantic_ai and openai_agents where stored (a plain load has the Python service's keys only)")
	f.StringVar(&o.format, "format", "dicts", "dicts (history messages) or pydantic-ai")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "system prompt placed first (pydantic-ai format)")
	f.StringVar(&o.agentName, "agent-name", "", "agent name recorded in the audit dump")
	f.StringVar(&o.prompt, "prompt", "", "prompt recorded in the audit dump")
	_ = cmd.MarkFlagRequired("session-id")
	return cmd
}

// noteEmpty says on stderr why a load printed no messages: storage is off,
// no such session for this user (the usual cause: a forgotten --user-id),
// or an empty one.
func (e *env) noteEmpty(s *sessionstore.Store, key string) {
	if !s.Enabled() {
		fmt.Fprintf(e.stderr, "remstore: note: %s; the output is empty, nothing was read\n", e.storageOff())
		return
	}
	_, _, err := s.GetSession(e.ctx, key, sessionstore.LoadOptions{})
	switch {
	case errors.Is(err, sessionstore.ErrNotFound):
		fmt.Fprintf(e.stderr, "remstore: note: no session %q for user %q; the output is empty (check --session-id and --user-id)\n", key, e.cfg.UserID)
	case err == nil:
		fmt.Fprintf(e.stderr, "remstore: note: session %q of user %q has no messages\n", key, e.cfg.UserID)
	}
}

func newLookupCmd(e *env) *cobra.Command {
	var sessionID string
	var index int
	cmd := &cobra.Command{
		Use:   "lookup KEY | lookup --session-id ID --index N",
		Short: "Print the full text behind a REM LOOKUP key",
		Long: `Prints the full content of the message behind the key. KEY may be the bare key
or a "REM LOOKUP <key>" phrase; --session-id with --index looks up the n-th
message of a session instead (the same operation). Only the --user-id tenant's
assistant messages are found. The text is printed as stored; a newline is
added only when stdout is a terminal, so piped output is byte-exact.
Exit 1 when nothing is found, 2 for a malformed key.`,
		Example: "  remstore lookup --user-id alice 'REM LOOKUP session-3f2a...-msg-4'\n" +
			"  remstore lookup --user-id alice --session-id chat-1 --index 1",
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0 && sessionID == "":
				return usageErr("nothing to look up: give a KEY (session-<uuid>-msg-<n>, as a cut message's hint names it) or --session-id with --index")
			case len(args) > 1:
				return usageErr("one KEY at a time, got %d arguments", len(args))
			case len(args) == 1 && sessionID != "":
				return usageErr("give a KEY or --session-id with --index, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				// A malformed key is a usage error whatever the database.
				if _, err := sessionstore.ParseLookupKey(args[0]); err != nil {
					return usageErr("%v", err)
				}
			}
			s, db, err := e.openStore(readOnly)
			if err != nil {
				return err
			}
			defer db.Close()
			if !s.Enabled() {
				// Nothing is found, as SPEC §7 says, and not for want of
				// the right --user-id: the words say why.
				what := fmt.Sprintf("index %d of session %q", index, sessionID)
				if sessionID == "" {
					what = args[0]
				}
				return &exitError{ExitNotFound, fmt.Errorf("lookup %s: nothing found, %w", what, sessionstore.ErrDisabled)}
			}
			var full string
			if sessionID != "" {
				full, err = s.LookupIndex(e.ctx, sessionID, index)
			} else {
				full, err = s.Lookup(e.ctx, args[0])
			}
			if err != nil {
				if fe, ok := models.AsFieldError(err); ok {
					return usageErr("%v", fe)
				}
				return err
			}
			if _, err = fmt.Fprint(e.stdout, full); err == nil && isTerminal(e.stdout) {
				_, err = fmt.Fprintln(e.stdout)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&sessionID, "session-id", "", "look up by session and --index instead of a key")
	cmd.Flags().IntVar(&index, "index", 0, "the message's index in the session (with --session-id)")
	return cmd
}

func newConvertCmd(e *env) *cobra.Command {
	var systemPrompt string
	var strict bool
	return withFlags(&cobra.Command{
		Use:   "convert",
		Short: "Convert a JSON history read on stdin to pydantic-ai's message JSON",
		Long: `Reads a JSON array of history messages on stdin and prints the JSON array that
pydantic_ai.messages.ModelMessagesTypeAdapter.validate_json accepts (1.42 and
2.x), with tool-call parts synthesized from the tool messages. No database.`,
		Example: `  remstore load --session-id chat-1 --user-id alice | remstore convert --system-prompt 'You are helpful.'`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			hist, err := e.readHistory()
			if err != nil {
				return err
			}
			var left convert.Unmappeds
			defer e.warnUnmapped(&left)
			out, err := convert.JSON(hist, convert.Options{SystemPrompt: systemPrompt, Strict: strict, OnUnmapped: left.Add})
			if err != nil {
				return err
			}
			_, err = e.stdout.Write(out)
			return err
		},
	}, func(c *cobra.Command) {
		c.Flags().StringVar(&systemPrompt, "system-prompt", "", "system prompt placed first")
		c.Flags().BoolVar(&strict, "strict", false, "exit 2 when a message cannot be converted (a role with no pydantic-ai form) instead of leaving it out with a warning")
	})
}

// warnUnmapped says on stderr what a conversion left out (SPEC §1: never in
// silence).
func (e *env) warnUnmapped(u *convert.Unmappeds) {
	if u.N > 0 {
		fmt.Fprintf(e.stderr, "remstore: warning: %s (--strict makes this an error)\n", u)
	}
}

func withFlags(c *cobra.Command, f func(*cobra.Command)) *cobra.Command { f(c); return c }

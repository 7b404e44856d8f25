package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/remstore/remstore/internal/version"
	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

// Version is this build's version (internal/version says how it is decided).
var Version = version.String()

// Exit codes.
const (
	ExitOK          = 0
	ExitNotFound    = 1
	ExitUsage       = 2
	ExitUnavailable = 3
)

// MaxInput caps what a command reads from stdin or a file in one go.
const MaxInput = 256 << 20

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{ExitUsage, fmt.Errorf(format, a...)}
}

// env is what every command shares: streams, settings, and the global flags.
type env struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)

	db, userID, logLevel string
	truncateLength       int
	jsonOut              bool

	flags   *pflag.FlagSet
	changed map[string]bool // flags given to the running command
	cfg     settings.Config
	log     *slog.Logger
}

// Options lets tests replace the environment; zero values use the process's.
type Options struct {
	Getenv func(string) (string, bool)
	Dir    string // where .env discovery starts
}

// Run executes the command line and returns the exit code.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, Options{}, args, stdin, stdout, stderr)
}

// RunWith is Run with a replaceable environment.
func RunWith(ctx context.Context, o Options, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr, getenv: o.Getenv}
	root := newRoot(e, o)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code := classify(err)
	msg := inFlagWords(cmd, err)
	if cmd != nil && (strings.HasPrefix(msg, "accepts ") || strings.HasPrefix(msg, "requires ")) {
		// cobra's count of arguments, with what the command takes.
		msg = fmt.Sprintf("%s: %s; usage: %s", cmd.CommandPath(), msg, cmd.UseLine())
	}
	if errors.Is(err, sessionstore.ErrDisabled) {
		// Where storage was switched off: a forgotten .env line, say.
		msg = strings.Replace(msg, sessionstore.ErrDisabled.Error(), e.storageOff(), 1)
	} else if code == ExitNotFound && cmd != nil && !errors.Is(err, sessionstore.ErrNotAnAnswer) {
		msg = e.notFoundWords(cmd, msg)
	}
	if strings.Contains(msg, `prepared statement "`) && (strings.Contains(msg, "does not exist") || strings.Contains(msg, "already exists")) {
		msg += " (a pooler in transaction mode, such as PgBouncer, in front of PostgreSQL? add default_query_exec_mode=cache_describe to the connection string: docs/operations.md)"
	}
	fmt.Fprintf(stderr, "remstore: %s\n", oneLine(msg))
	return code
}

// notFoundWords names what was typed and whose it was looked up as: the
// library knows a session by its UUID, the user typed "chat-1", and the
// usual cause is a forgotten --user-id.
func (e *env) notFoundWords(cmd *cobra.Command, msg string) string {
	typed := ""
	if f := cmd.Flags().Lookup("session-id"); f != nil && f.Changed {
		typed = f.Value.String()
	} else if args := cmd.Flags().Args(); len(args) > 0 && strings.Contains(cmd.Use, "SESSION") {
		typed = args[0]
	}
	if typed != "" && !strings.Contains(msg, strconv.Quote(typed)) {
		if sid, err := sessionstore.SessionUUID(e.cfg.UserID, typed); err == nil && sid.String() != typed {
			msg = strings.Replace(msg, "session "+sid.String(), fmt.Sprintf("session %q (%s)", typed, sid), 1)
			if !strings.Contains(msg, strconv.Quote(typed)) {
				msg += fmt.Sprintf(" (session %q is %s)", typed, sid)
			}
		}
	}
	return fmt.Sprintf("%s for user %q (what another --user-id stored is not visible to this one)", msg, e.cfg.UserID)
}

// storageOff says that storage is switched off and where it was: a
// command that finds nothing because of it says so, rather than leaving the
// user to suspect the session id or the user id.
func (e *env) storageOff() string {
	return fmt.Sprintf("storage is off (%s=false, from %s)", settings.KeyPostgresEnabled, e.cfg.Sources[settings.KeyPostgresEnabled])
}

// inFlagWords names the flag typed where the library named its field:
// "--keep-last: must be >= 0", not `field "keep_last": must be >= 0`.
func inFlagWords(cmd *cobra.Command, err error) string {
	fe, ok := models.AsFieldError(err)
	if !ok || fe.Index >= 0 || fe.Field == "" || cmd == nil {
		return err.Error()
	}
	name := strings.ReplaceAll(fe.Field, "_", "-")
	if cmd.Flags().Lookup(name) == nil {
		return err.Error()
	}
	return "--" + name + ": " + fe.Reason
}

// classify is the exit code of an error: its class (sessionstore.Classify,
// the classification every surface maps from), or a usage error of cobra's.
func classify(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// cobra's own errors (unknown flag, bad args) are usage errors.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand", "invalid argument", "accepts ", "requires ", "required flag", "flag needs"} {
		if strings.Contains(msg, p) {
			return ExitUsage
		}
	}
	return exitCodes[sessionstore.Classify(err).Kind]
}

// exitCodes are the exit codes of the error classes.
var exitCodes = map[sessionstore.Kind]int{
	sessionstore.BadInput:    ExitUsage,
	sessionstore.NotFound:    ExitNotFound,
	sessionstore.Conflict:    ExitUsage,
	sessionstore.Timeout:     ExitUnavailable,
	sessionstore.Unavailable: ExitUnavailable,
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", "; ")
}

func newRoot(e *env, o Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "remstore",
		Short: "Keep agent conversations in PostgreSQL (or SQLite) and rebuild them as model history",
		Long: `remstore stores every message of an agent conversation in full, loads it back
with long assistant answers cut to a REM LOOKUP hint, recovers the cut text by
key, and converts the history to pydantic-ai's message format.

Without configuration it uses an embedded SQLite file; set --db or REMSTORE_DB
(or the Python service's POSTGRES__CONNECTION_STRING) to a postgres:// URL for PostgreSQL.`,
		Example:       "  remstore demo\n  remstore load --session-id chat-1 --user-id alice --format pydantic-ai",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return e.loadSettings(cmd, o)
		},
	}
	root.SetFlagErrorFunc(flagError)
	pf := root.PersistentFlags()
	pf.StringVar(&e.db, "db", "", "database: postgres:// URL, keyword DSN ('host=... dbname=...') or SQLite file path (env REMSTORE_DB)")
	pf.StringVar(&e.userID, "user-id", "", "user id the store is bound to, written as tenant_id (env REMSTORE_USER_ID, default anonymous)")
	pf.IntVar(&e.truncateLength, "truncate-length", 0, "T: assistant messages longer than 2T code points are cut (env REMSTORE_TRUNCATE_LENGTH, default 200)")
	pf.StringVar(&e.logLevel, "log-level", "", "debug, info, warn or error (env REMSTORE_LOG_LEVEL; default warn, info for serve)")
	pf.BoolVar(&e.jsonOut, "json", false, "machine-readable JSON output where the output is a table")
	e.flags = pf

	root.AddCommand(
		newEnvCmd(e),
		newHealthCmd(e),
		newCompressCmd(e),
		newStoreCmd(e),
		newLoadCmd(e),
		newLookupCmd(e),
		newConvertCmd(e),
		newDemoCmd(e),
		newAuditCmd(e),
		newExportCmd(e),
		newImportCmd(e),
		newMigrateCmd(e),
		newCitusCmd(e),
		newSessionsCmd(e),
		newSearchCmd(e),
		newServeCmd(e),
		newMCPCmd(e),
		newBenchCmd(e),
	)
	root.DisableSuggestions = true // unknownCommand suggests, in one line
	// The completion command takes its output stream when made: set first.
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	root.InitDefaultCompletionCmd()
	root.AddCommand(newReferenceCmd(root))
	groupsRefuseTypos(root)
	return root
}

// groupsRefuseTypos makes every command that only groups others (the root,
// sessions, audit, citus) print its help when called bare, and refuse an
// unknown word with exit 2 and one suggestion, where cobra would print the
// help and exit 0 on "sessions lst".
func groupsRefuseTypos(c *cobra.Command) {
	for _, sub := range c.Commands() {
		groupsRefuseTypos(sub)
	}
	if !c.HasSubCommands() || c.Run != nil || c.RunE != nil {
		return
	}
	c.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
		return nil
	}
	c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
}

// flagError says what was wrong with a flag in the words of the flag:
// `--truncate-length: "abc" is not an integer`, not strconv's message, and
// the nearest flag for one that does not exist.
func flagError(cmd *cobra.Command, err error) error {
	var bad *pflag.InvalidValueError
	if errors.As(err, &bad) {
		f := bad.GetFlag()
		want := map[string]string{
			"int": "an integer", "int64": "an integer", "int32": "an integer", "uint": "a whole number ≥ 0",
			"uint64": "a whole number ≥ 0", "float64": "a number", "bool": "true or false",
			"duration": "a duration such as 30s, 5m or 1h",
		}[f.Value.Type()]
		if want == "" {
			return usageErr("--%s: %q: %v", f.Name, bad.GetValue(), errors.Unwrap(err))
		}
		return usageErr("--%s: %q is not %s", f.Name, bad.GetValue(), want)
	}
	var missing *pflag.NotExistError
	if errors.As(err, &missing) && strings.HasPrefix(err.Error(), "unknown flag") {
		// "remstore lod --session-id x": the word before the flag names no
		// command, and that is the mistake to report, not the flag (which the
		// command meant would know).
		if args := cmd.Flags().Args(); cmd.HasSubCommands() && len(args) > 0 {
			if sub, _, ferr := cmd.Find(args[:1]); ferr != nil || sub == cmd {
				return unknownCommand(cmd, args[0])
			}
		}
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		hint := ""
		given := missing.GetSpecifiedName()
		near := models.Nearest(given, names)
		if near == "" {
			// --user for --user-id: a flag the given name starts.
			for _, n := range names {
				if strings.HasPrefix(n, given+"-") {
					near = n
					break
				}
			}
		}
		if near != "" {
			hint = fmt.Sprintf("; did you mean --%s?", near)
		}
		return usageErr("unknown flag --%s for %q%s", given, cmd.CommandPath(), hint)
	}
	return usageErr("%v", err)
}

// unknownCommand is the usage error for a word that names no subcommand of
// cmd, with the nearest name (or alias) when one is near.
func unknownCommand(cmd *cobra.Command, word string) error {
	var names []string
	for _, s := range cmd.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
			names = append(names, s.Aliases...)
		}
	}
	hint := models.DidYouMean(word, names)
	if hint == "" {
		// cobra's prefix match: "sess" for sessions.
		if s := cmd.SuggestionsFor(word); len(s) > 0 {
			hint = fmt.Sprintf("; did you mean %q?", s[0])
		}
	}
	if hint == "" {
		hint = fmt.Sprintf("; %q lists the commands", cmd.CommandPath()+" --help")
	}
	return usageErr("unknown command %q for %q%s", word, cmd.CommandPath(), hint)
}

func (e *env) loadSettings(cmd *cobra.Command, o Options) error {
	flags, names := map[string]string{}, map[string]string{}
	set := func(name, key, val string) {
		if cmd.Flags().Changed(name) {
			flags[key], names[key] = val, "--"+name
		}
	}
	set("db", settings.KeyDB, e.db)
	set("user-id", settings.KeyUserID, e.userID)
	set("truncate-length", settings.KeyTruncateLength, strconv.Itoa(e.truncateLength))
	set("log-level", settings.KeyLogLevel, e.logLevel)
	e.changed = map[string]bool{}
	cmd.Flags().Visit(func(f *pflag.Flag) { e.changed[f.Name] = true })
	cfg, err := settings.Load(settings.Options{Flags: flags, FlagName: names, Getenv: o.Getenv, Dir: o.Dir})
	if err != nil {
		return usageErr("%v", err)
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	if cfg.Sources[settings.KeyLogLevel] == "default" && cmd.Name() == "serve" {
		cfg.LogLevel = "info" // a server logs each request unless told otherwise
	}
	e.cfg = cfg
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[cfg.LogLevel]
	e.log = slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: level}))
	for _, w := range cfg.Warnings {
		e.log.Warn(w)
	}
	return nil
}

// readInput reads stdin (or the named file, "-" = stdin), capped at MaxInput.
func (e *env) readInput(what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(e.stdin, MaxInput+1))
	if err != nil {
		return nil, usageErr("read %s: %v", what, err)
	}
	if len(b) > MaxInput {
		return nil, usageErr("%s: input larger than %d MiB", what, MaxInput>>20)
	}
	return b, nil
}

// readHistory reads and decodes the JSON history on stdin.
func (e *env) readHistory() ([]models.HistoryMessage, error) {
	in, err := e.readInput("stdin")
	if err != nil {
		return nil, err
	}
	msgs, err := models.DecodeHistory(in)
	if err != nil {
		return nil, usageErr("stdin: %v", err)
	}
	return msgs, nil
}

// plural is "1 message", "2 messages".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// isTerminal reports whether w is a terminal (not a pipe, file or buffer).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

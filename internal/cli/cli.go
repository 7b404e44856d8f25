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

	"github.com/remstore/remstore/models"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "0.1.0-dev"

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
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := classify(err)
	fmt.Fprintf(stderr, "remstore: %s\n", oneLine(err.Error()))
	return code
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
(or the peer's POSTGRES__CONNECTION_STRING) to a postgres:// URL for PostgreSQL.`,
		Example:       "  remstore demo\n  remstore load --session-id chat-1 --format pydantic-ai",
		Version:       Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return e.loadSettings(cmd, o)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	pf := root.PersistentFlags()
	pf.StringVar(&e.db, "db", "", "database: postgres:// URL or SQLite file path (env REMSTORE_DB)")
	pf.StringVar(&e.userID, "user-id", "", "user id the store is bound to, written as tenant_id (env REMSTORE_USER_ID, default anonymous)")
	pf.IntVar(&e.truncateLength, "truncate-length", 0, "T: assistant messages longer than 2T code points are cut (env REMSTORE_TRUNCATE_LENGTH, default 200)")
	pf.StringVar(&e.logLevel, "log-level", "", "debug, info, warn or error (env REMSTORE_LOG_LEVEL; default warn, info for serve)")
	pf.BoolVar(&e.jsonOut, "json", false, "machine-readable JSON output where the output is a table")
	e.flags = pf

	root.AddCommand(
		newEnvCmd(e),
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
		newServeCmd(e),
		newMCPCmd(e),
		newBenchCmd(e),
	)
	return root
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

package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/remstore/remstore/httpapi"
	"github.com/remstore/remstore/internal/telemetry"
	"github.com/remstore/remstore/internal/version"
	"github.com/remstore/remstore/mcpserver"
	"github.com/remstore/remstore/sessionstore"
	"github.com/remstore/remstore/settings"
)

func newServeCmd(e *env) *cobra.Command {
	o := &serveOpts{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP API (store, load, lookup, sessions) with metrics and an OpenAPI document",
		Long: `Serves the JSON API described at /openapi.json. Requests need
"Authorization: Bearer <key>" with a key from REMSTORE_API_KEYS (comma-separated;
"key=alice" binds a key to one user) or --api-keys-file, and act for the user in
X-User-Id. --insecure-no-auth drops the key check and is refused unless --addr is
a loopback address. --ui adds the read-only viewer at /ui/: a browser signs in
once with an API key and sees its user's sessions, what the agent saw of each
and the audit dumps. SIGTERM stops accepting requests and finishes the ones in
flight before exiting.

Every wait is bounded: headers must arrive within 10s and a body within
--body-timeout (408 after), and a request takes one of --max-in-flight slots
only once its body has arrived; idle keep-alive connections close after
--idle-timeout; connections beyond --max-conns (kept below the descriptor
limit) or --max-conns-per-client from one address are answered 503 and closed.
A connection that has not yet carried a valid API key gets at most half the
slots and 10s of idleness, and the one idle longest makes room for a newcomer:
idle connections cannot lock signed-in clients out.
A search has a budget of its own: one per user at once and --max-searches in
all (429 beyond), each within --search-timeout.

TLS: --tls-cert and --tls-key (PEM files) make serve speak HTTPS itself (TLS 1.2
or newer; every response carries Strict-Transport-Security and the viewer's
cookies are Secure). Behind a proxy that ends TLS, --trusted-proxy names it
(addresses, CIDR prefixes, or "loopback"): from those addresses only,
X-Forwarded-Proto: https counts as TLS and X-Forwarded-For names the client
for the per-client limits and the logs. docs/operations.md shows both.

Host names: on a loopback --addr only localhost, 127.0.0.1 and ::1 are answered
(a page whose name was rebound to 127.0.0.1 gets 421), on another address that
address; --allowed-host adds names (the public name behind a proxy). POST,
PATCH and DELETE from another site's page (Origin or Referer) get 403.`,
		Example: "  REMSTORE_API_KEYS=$(openssl rand -hex 16) remstore serve --addr 127.0.0.1:8088\n" +
			"  remstore serve --insecure-no-auth --addr 127.0.0.1:0 --url-file /tmp/remstore.url &   # any free port\n" +
			"  remstore serve --insecure-no-auth\n" +
			"  remstore serve --ui --insecure-no-auth   # then open http://127.0.0.1:8088/ui/\n" +
			"  remstore serve --addr :8443 --tls-cert cert.pem --tls-key key.pem --api-keys-file keys.txt\n" +
			"  remstore serve --addr 127.0.0.1:8088 --trusted-proxy loopback --api-keys-file keys.txt   # behind nginx/caddy",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := o.check(e, cmd)
			if err != nil {
				return err
			}
			return o.run(e, p)
		},
	}
	o.flags(cmd.Flags())
	return cmd
}

// serveOpts are serve's flags.
type serveOpts struct {
	addr, keysFile    string
	urlFile           string
	insecure, ui      bool
	maxBody           int64
	timeout, shutdown time.Duration
	maxInFlight       int
	maxSearches       int
	searchTimeout     time.Duration
	bodyTimeout, idle time.Duration
	maxConns, perConn int
	tlsCert, tlsKey   string
	trusted, hosts    []string
}

// flags registers o on f.
func (o *serveOpts) flags(f *pflag.FlagSet) {
	f.StringVar(&o.addr, "addr", "", "listen address; port 0 picks a free one (env REMSTORE_ADDR, default "+settings.DefaultAddr+")")
	f.StringVar(&o.urlFile, "url-file", "", "once listening, write the server's URL to this file (removed on exit): for scripts, with port 0")
	f.StringVar(&o.keysFile, "api-keys-file", "", "file with API keys (one per line or comma-separated)")
	f.BoolVar(&o.insecure, "insecure-no-auth", false, "no API key check (loopback only)")
	f.BoolVar(&o.ui, "ui", false, "serve the read-only session and audit viewer at /ui/")
	f.Int64Var(&o.maxBody, "max-body", httpapi.DefaultMaxBodyBytes, "largest request body in bytes (413 above); bodies over 1 MiB hold their bytes until their request ends, 4 x this in all, 2 x for one payer (429 beyond)")
	f.DurationVar(&o.timeout, "timeout", httpapi.DefaultRequestTimeout, "per-request timeout")
	f.IntVar(&o.maxInFlight, "max-in-flight", httpapi.DefaultMaxInFlight, "requests served at once (429 above), three quarters of them at most for one caller (an API key not bound to a user, or the user)")
	f.IntVar(&o.maxSearches, "max-searches", httpapi.DefaultMaxSearches, "searches running at once, one per user, or per API key for a key not bound to one user (429 above)")
	f.DurationVar(&o.searchTimeout, "search-timeout", httpapi.DefaultSearchTimeout, "how long one search may run (503 timeout after)")
	f.DurationVar(&o.bodyTimeout, "body-timeout", httpapi.DefaultBodyTimeout, "how long a request body may take to arrive (408 after)")
	f.DurationVar(&o.idle, "idle-timeout", httpapi.DefaultIdleTimeout, "close keep-alive connections idle this long")
	f.IntVar(&o.maxConns, "max-conns", httpapi.DefaultMaxConns, "open connections at most (kept below the descriptor limit; 503 and close above)")
	f.IntVar(&o.perConn, "max-conns-per-client", httpapi.DefaultMaxConnsPerClient, "open connections from one client address at most")
	f.DurationVar(&o.shutdown, "shutdown-timeout", 30*time.Second, "how long SIGTERM waits for requests in flight")
	f.StringVar(&o.tlsCert, "tls-cert", "", "PEM certificate (chain) file: serve HTTPS (with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "PEM private key file of --tls-cert")
	f.StringSliceVar(&o.hosts, "allowed-host", nil, "host names the server answers to besides its --addr (and loopback names on loopback)")
	f.StringSliceVar(&o.trusted, "trusted-proxy", nil, `addresses or CIDR prefixes (or "loopback") of proxies that end TLS in front of serve; their X-Forwarded-Proto and X-Forwarded-For are believed`)
}

// servePlan is what check made of the flags and settings before anything
// is opened: a wrong value is a usage error, never a half-started server.
type servePlan struct {
	addrName string // how the user named the address: --addr, or REMSTORE_ADDR (from ...)
	keys     []httpapi.APIKey
	proxies  []netip.Prefix
	allowed  []string
	tls      *tls.Config
}

// check validates the flags and settings and loads what they name (keys,
// certificates).
func (o *serveOpts) check(e *env, cmd *cobra.Command) (servePlan, error) {
	var plan servePlan
	plan.addrName = "--addr"
	if !cmd.Flags().Changed("addr") {
		o.addr, plan.addrName = e.cfg.Addr, e.cfg.Origin(settings.KeyAddr)
	}
	host, port, err := net.SplitHostPort(o.addr)
	if err != nil {
		return plan, usageErr("%s: %v", plan.addrName, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		// Checked before the database: a typo is a usage error.
		return plan, usageErr("%s %q: port %q is not a number from 0 to 65535", plan.addrName, o.addr, port)
	}
	if ip := net.ParseIP(host); o.insecure && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return plan, usageErr("--insecure-no-auth is only allowed on a loopback address, not %q", host)
	}
	if o.maxSearches < 1 || o.searchTimeout <= 0 {
		return plan, usageErr("--max-searches and --search-timeout must be positive")
	}
	if o.maxConns < 1 || o.perConn < 1 || o.bodyTimeout <= 0 || o.idle <= 0 || o.maxInFlight < 1 {
		return plan, usageErr("--max-conns, --max-conns-per-client, --max-in-flight, --body-timeout and --idle-timeout must be positive")
	}
	raw := e.cfg.APIKeys
	if o.keysFile != "" {
		b, err := os.ReadFile(o.keysFile)
		if err != nil {
			return plan, usageErr("--api-keys-file: %v", err)
		}
		raw += "," + string(b)
	}
	if plan.keys, err = httpapi.ParseAPIKeys(raw); err != nil {
		return plan, usageErr("%s: %v", settings.KeyAPIKeys, err)
	}
	if len(plan.keys) == 0 && !o.insecure {
		return plan, usageErr("no API keys: set REMSTORE_API_KEYS or --api-keys-file (or --insecure-no-auth on loopback)")
	}
	plan.proxies, err = httpapi.ParseTrustedProxies(o.trusted)
	if err != nil {
		return plan, usageErr("--trusted-proxy: %v", err)
	}
	if err := httpapi.CheckTraceURL(e.cfg.TraceURL); err != nil {
		return plan, usageErr("%s: %v", settings.KeyTraceURL, err)
	}
	plan.allowed = httpapi.AllowedHosts(o.addr, o.hosts)
	if plan.allowed == nil {
		e.log.Warn("serving every Host name on an unspecified address: name the server's with --allowed-host to refuse DNS rebinding", "addr", o.addr)
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return plan, usageErr("--tls-cert and --tls-key go together")
	}
	if o.tlsCert != "" {
		// Loaded before the database is opened: a wrong path is a usage error.
		cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
		if err != nil {
			return plan, usageErr("--tls-cert/--tls-key: %v", err)
		}
		plan.tls = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return plan, nil
}

// searchIndexEvery is how often serve indexes what was stored for search:
// a message is searchable within about this long (a search also indexes
// what waits first).
const searchIndexEvery = time.Second

// run opens the stores, listens and serves until the context ends, then
// drains the requests in flight.
func (o *serveOpts) run(e *env, p servePlan) error {
	// Traces, when the OTEL_* variables ask for them (internal/telemetry):
	// the stores and the API use the global provider this sets.
	getenv := os.Getenv
	if e.getenv != nil {
		getenv = func(k string) string { v, _ := e.getenv(k); return v }
	}
	shutdown, traced, err := telemetry.Setup(e.ctx, getenv, version.String())
	if err != nil {
		return usageErr("%v", err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // what is buffered, flushed within a bound
		defer cancel()
		if err := shutdown(ctx); err != nil {
			e.log.Warn("OpenTelemetry: spans not exported at shutdown", "err", err)
		}
	}()
	if traced {
		fmt.Fprintln(e.stderr, "remstore: traces go to OTLP (OTEL_EXPORTER_OTLP_*)")
	}
	stores, db, err := e.openStores(writes)
	if err != nil {
		return err
	}
	defer db.Close()
	// Search's index (PostgreSQL) kept up with the writes, off their path:
	// stopped before the database closes.
	ictx, stopIndex := context.WithCancel(e.ctx)
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		sessionstore.IndexSearchEvery(ictx, db, searchIndexEvery, func(err error) { e.log.Warn("search index", "err", err) })
	}()
	defer func() { stopIndex(); <-indexed }()
	api, err := httpapi.New(httpapi.Options{Stores: stores,
		APIKeys: p.keys, Insecure: o.insecure, AuditEnabled: e.cfg.AuditEnabled, AuditDir: e.cfg.AuditDir, MaxBodyBytes: o.maxBody, RequestTimeout: o.timeout, MaxInFlight: o.maxInFlight, Logger: e.log, UI: o.ui,
		BodyTimeout: o.bodyTimeout, TrustedProxies: p.proxies, AllowedHosts: p.allowed, MaxSearches: o.maxSearches, SearchTimeout: o.searchTimeout,
		TraceURL: e.cfg.TraceURL})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		// The flag's value cannot be used: say which, and how to
		// pick another (issue 43: exit 3 read as "storage unavailable").
		return usageErr("%s %s: the address is in use (another remstore serve?); choose another port, or --addr 127.0.0.1:0 for any free one (serve prints where it listens)", p.addrName, o.addr)
	}
	if err != nil {
		return &exitError{ExitUnavailable, fmt.Errorf("listen on %s %s: %w", p.addrName, o.addr, err)}
	}
	maxConns := min(o.maxConns, descriptorBudget())
	limited := httpapi.LimitListener(ln, maxConns, o.perConn)
	ln = limited
	srv := httpapi.HTTPServer(api, o.idle, o.bodyTimeout, o.timeout)
	limited.Attach(srv)
	srv.TLSConfig = p.tls
	scheme := "http"
	if p.tls != nil {
		scheme = "https"
		ln = tls.NewListener(ln, p.tls)
	}
	fmt.Fprintf(e.stderr, "remstore: listening on %s://%s\n", scheme, ln.Addr())
	if o.urlFile != "" {
		// Written once the socket accepts: a script that waits for the
		// file can talk to the server at once, on whatever port it got.
		u := strings.Replace(settings.LocalURL(ln.Addr().String()), "http://", scheme+"://", 1)
		if err := writeFileAtomic(o.urlFile, []byte(u+"\n")); err != nil {
			_ = ln.Close()
			return usageErr("--url-file: %v", err)
		}
		defer os.Remove(o.urlFile)
	}
	if o.ui {
		fmt.Fprintf(e.stderr, "remstore: viewer at %s://%s/ui/\n", scheme, ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-e.ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdown)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Fprintln(e.stderr, "remstore: stopped")
	return nil
}

func newMCPCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve REM LOOKUP and session history as MCP tools on stdio",
		Long: `Runs a Model Context Protocol server on stdin/stdout with two tools:
rem_lookup(key) returns the full text behind a REM LOOKUP key, and
session_history(session_id, compress, offset, limit) returns a page of a
session's messages (200 unless limit says, 2,000 at most, about 2 MiB), with a
note naming the next page's offset when more follow. Tool arguments that give a
key twice are refused naming it. The tenant is --user-id (or
REMSTORE_USER_ID). A line that is not a JSON-RPC 2.0 message (not JSON,
invalid UTF-8, over 4 MiB, nested over 1,000 deep, a batch) gets its JSON-RPC
error (-32700, -32600, -32602) and the stream goes on.`,
		Example: "  remstore mcp --user-id alice --db postgres://localhost/app",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, db, err := e.openStore(readOnly)
			if err != nil {
				return err
			}
			defer db.Close()
			var st *sessionstore.Store = s
			err = mcpserver.Serve(e.ctx, st, Version, e.stdin, e.stdout)
			if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		},
	}
}

// writeFileAtomic writes b to path through a temporary file beside it, so a
// reader never sees half a URL.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.partial")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

package settings

// Variable is one setting as a user meets it: the environment variable (also
// a .env key), who reads it, its default and what it does. The reference page
// docs/reference.md is generated from Variables (TestReferenceIsCurrent).
type Variable struct {
	Name, ReadBy, Default, Meaning string
}

// Variables lists every variable remstore reads, in the order the reference
// shows them. A new Key constant without a line here fails TestEveryKeyListed.
func Variables() []Variable {
	return []Variable{
		{KeyDB, "every command", "`remstore.db` in the user's data directory (`remstore env` prints it)",
			"The database: a `postgres://` URL, a keyword DSN (`host=... dbname=...`) or the path of an SQLite file. Flag `--db`."},
		{KeyPostgresURL, "every command", "unset",
			"The Python service's name for the PostgreSQL URL; used when `REMSTORE_DB` is not set."},
		{KeyPostgresEnabled, "every command", "`true`",
			"Storage switch shared with the Python service: `true` or `false`, in any case. `false` turns storage off: stores write nothing and say so, loads are empty, and commands that find nothing say storage is off. Any other value (a typo such as `flase`, or `1`, `yes`, an empty value) stops every command with exit 2 naming the variable, instead of turning storage off in silence as the Python service would."},
		{KeyUserID, "every command", "`" + DefaultUserID + "` (a note on stderr says so)",
			"The user a command acts for, written as `tenant_id`. Flag `--user-id`."},
		{KeyTruncateLength, "every command", "`200`",
			"T: assistant answers longer than 2T characters load as their first and last T around a `REM LOOKUP` hint. Flag `--truncate-length`."},
		{KeyLogLevel, "every command", "`warn` (`info` for `serve`)", "`debug`, `info`, `warn` or `error`. Flag `--log-level`."},
		{KeyConnectTimeout, "every command", "`10s`", "How long connecting to PostgreSQL may take (a Go duration)."},
		{KeyStatementTimeout, "every command", "`0s` (none)", "PostgreSQL `statement_timeout` for remstore's connections."},
		{KeyAuditSession, "store, load, serve", "unset",
			"Set and not empty: every pydantic-ai load for an agent call (`--format pydantic-ai`, `?format=pydantic-ai`) also writes an audit dump of what the model saw; Go agents and other callers record their calls themselves (`sdk.RunTurn`, `POST /v1/sessions/{id}/audit`)."},
		{KeyAuditDir, "store, load, serve", "a private directory in the user's state directory", "Where audit dumps go: one file per session, named by its UUID (`remstore audit show NAME` finds it)."},
		{KeyAPIKeys, "serve", "unset (serve refuses to start without keys unless `--insecure-no-auth` on loopback)",
			"Comma-separated bearer keys; `key=alice` binds a key to one user. Also `--api-keys-file`."},
		{KeyAddr, "serve", "`" + DefaultAddr + "`", "Listen address; port 0 picks a free port (`--url-file` says which). Flag `--addr`."},
		{KeyURL, "health, the Go and Python clients", "`http://` + `REMSTORE_ADDR` (loopback for `0.0.0.0`)", "The server's base URL."},
		{KeyAPIKey, "the Go and Python clients", "unset", "The one bearer key a client sends (the server's list is `REMSTORE_API_KEYS`)."},
		{KeyMaxSessionMsgs, "every command that stores, serve", "`0` (no limit)",
			"How many messages one session may hold for a user, removed ones included; a store, compaction, fork or import past it is refused (409 `limit_reached`, field `messages`; exit 2) and writes nothing, checked in the transaction that writes, so concurrent writers cannot pass it together."},
		{KeyMaxSessions, "every command that stores, serve", "`0` (no limit)",
			"How many sessions one user may own, deleted ones included until purged; a store, fork or import that would open one more is refused (409 `limit_reached`, field `session_id`; exit 2) and writes nothing, concurrent ones included."},
		{KeyOTLPEndpoint, "serve", "unset (no traces)",
			"Where serve sends OpenTelemetry traces, by OTLP over HTTP (`http://localhost:4318`); setting it turns tracing on. The other standard names work too: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` (default `remstore`), `OTEL_TRACES_SAMPLER`; `OTEL_TRACES_EXPORTER=none` or `OTEL_SDK_DISABLED=true` turns it off. Read from the process environment, not `.env`."},
		{KeyTraceURL, "serve", "unset (trace ids shown, not linked)",
			"The viewer's link from a message to its trace in your tracing system: an http(s) URL with `{trace_id}` (and `{span_id}`) in it, e.g. `http://localhost:16686/trace/{trace_id}` for Jaeger."},
	}
}

func names() []string {
	var out []string
	for _, v := range Variables() {
		out = append(out, v.Name)
	}
	return out
}

func known(key string) bool {
	for _, v := range Variables() {
		if v.Name == key {
			return true
		}
	}
	return false
}

package settings

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/joho/godotenv"

	"github.com/remstore/remstore/models"
)

// Setting names. Each is an environment variable (and .env key); Flags uses
// the same names.
const (
	KeyDB               = "REMSTORE_DB"                   // database URL or SQLite path
	KeyPostgresURL      = "POSTGRES__CONNECTION_STRING"   // the Python service's variable; selects PostgreSQL
	KeyPostgresEnabled  = "POSTGRES_ENABLED"              // storage switch shared with the Python service
	KeyUserID           = "REMSTORE_USER_ID"              // the store's user id (tenant)
	KeyTruncateLength   = "REMSTORE_TRUNCATE_LENGTH"      // T of the contract with the Python service
	KeyAuditSession     = "DEBUG_AUDIT_SESSION"           // audit switch
	KeyAuditDir         = "DEBUG_AUDIT_DIR"               // audit directory
	KeyLogLevel         = "REMSTORE_LOG_LEVEL"            // debug, info, warn, error
	KeyConnectTimeout   = "REMSTORE_CONNECT_TIMEOUT"      // PostgreSQL connect timeout (Go duration)
	KeyStatementTimeout = "REMSTORE_STATEMENT_TIMEOUT"    // PostgreSQL statement_timeout (Go duration, 0 = none)
	KeyAPIKeys          = "REMSTORE_API_KEYS"             // serve: comma-separated bearer keys, "key=user" binds one
	KeyAddr             = "REMSTORE_ADDR"                 // serve: listen address
	KeyURL              = "REMSTORE_URL"                  // clients: the server's base URL
	KeyAPIKey           = "REMSTORE_API_KEY"              // clients: the one bearer key they send
	KeyMaxSessionMsgs   = "REMSTORE_MAX_SESSION_MESSAGES" // messages one session may hold per user (0: no limit)
	KeyMaxSessions      = "REMSTORE_MAX_SESSIONS"         // sessions one user may own (0: no limit)
	KeyOTLPEndpoint     = "OTEL_EXPORTER_OTLP_ENDPOINT"   // serve: where traces go (internal/telemetry reads it and the other OTEL_* names)
	KeyTraceURL         = "REMSTORE_TRACE_URL"            // serve: the viewer's link to a message's trace
)

// Defaults.
const (
	DefaultUserID         = "anonymous" // what the Python service's API uses without a user
	DefaultTruncateLength = 200
	DefaultLogLevel       = "warn"
	DefaultAddr           = "127.0.0.1:8088" // serve's listen address; clients' URL is http:// + this
	MaxTruncateLength     = 1_000_000        // compressor.MaxTruncateLength
)

// Config is every setting remstore reads, resolved.
type Config struct {
	// DatabaseURL is a postgres:// URL or the path of the embedded SQLite
	// file. Default: remstore.db in the user's data directory.
	DatabaseURL string
	// StorageEnabled is false only when POSTGRES_ENABLED is set to something
	// other than "true" (any case); then store, load and lookup do nothing.
	// A value that is neither "true" nor "false" leaves it false, as the Python
	// service reads it, and Validate refuses it.
	StorageEnabled bool
	// UserID is the store's user id, written as tenant_id. Default "anonymous".
	UserID string
	// TruncateLength is T: messages longer than 2T are cut. Default 200.
	TruncateLength int
	// AuditEnabled mirrors DEBUG_AUDIT_SESSION (set and not empty).
	AuditEnabled bool
	// AuditDir is DEBUG_AUDIT_DIR. Default: DefaultAuditDir(), a private
	// directory in the user's state directory (not the shared temp directory,
	// where another user could plant symlinks).
	AuditDir string
	// LogLevel is debug, info, warn or error. Default warn.
	LogLevel string
	// ConnectTimeout bounds connecting to PostgreSQL. Default 10s.
	ConnectTimeout time.Duration
	// StatementTimeout is PostgreSQL's statement_timeout for remstore's
	// connections. Default 0: none.
	StatementTimeout time.Duration
	// APIKeys is REMSTORE_API_KEYS as given (serve parses it). Secret:
	// `remstore env` masks it.
	APIKeys string
	// Addr is where serve listens. Default DefaultAddr; port 0 picks a free one.
	Addr string
	// TraceURL is REMSTORE_TRACE_URL: the viewer's link to a trace.
	TraceURL string
	// URL is the server clients talk to (remstore health). Default: the
	// loopback form of Addr.
	URL string
	// MaxSessionMessages and MaxSessions bound what one user can store
	// (sessionstore.Limits); 0, the default, is no limit.
	MaxSessionMessages, MaxSessions int

	// Sources says where each value came from: "flag", "env", ".env
	// (<path>)" or "default", keyed by setting name.
	Sources map[string]string
	// Warnings are problems that do not stop remstore on their own (e.g. a
	// REMSTORE_ name in .env that remstore does not read). Those that
	// Validate refuses are here too, for a caller that does not validate.
	Warnings []string
	// DotEnvPath is the .env file that was read, if any.
	DotEnvPath string

	flagNames map[string]string
	// badEnabled is a POSTGRES_ENABLED value that is neither true nor
	// false, for Validate to refuse; nil when the value is one of them.
	badEnabled *string
	// What Shown prints of the variables read for others (the clients,
	// telemetry), as given.
	postgresURL, apiKey, otlp string
}

// Origin names where a setting came from the way the user wrote it: the flag
// ("--db") when it came from the command line, else the variable and its
// layer ("REMSTORE_DB (from env)"). Error messages use it.
func (c Config) Origin(key string) string {
	if c.Sources[key] == "flag" {
		if n := c.flagNames[key]; n != "" {
			return n
		}
	}
	src := c.Sources[key]
	if src == "" {
		src = "default"
	}
	return fmt.Sprintf("%s (from %s)", key, src)
}

// Options controls Load. The zero value reads the process environment and
// looks for .env from the working directory.
type Options struct {
	Flags    map[string]string           // values given on the command line, by setting name
	FlagName map[string]string           // the flag each setting name was given as ("--db"), for Origin
	Dir      string                      // where to start looking for .env; "" = working directory
	Getenv   func(string) (string, bool) // nil = os.LookupEnv
	NoDotEnv bool                        // skip .env discovery
}

// Load resolves the configuration. It fails only when a .env file exists
// but cannot be parsed; call Validate for the values themselves.
func Load(opts Options) (Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	cfg := Config{Sources: map[string]string{}, flagNames: opts.FlagName}
	var dotenv map[string]string
	if !opts.NoDotEnv {
		path := FindDotEnv(opts.Dir)
		if path != "" {
			m, err := godotenv.Read(path)
			if err != nil {
				return cfg, fmt.Errorf(".env file %s: %w", path, err)
			}
			dotenv, cfg.DotEnvPath = m, path
		}
	}
	lookup := func(key string) (string, string, bool) {
		if v, ok := opts.Flags[key]; ok {
			return v, "flag", true
		}
		if v, ok := getenv(key); ok {
			return v, "env", true
		}
		if v, ok := dotenv[key]; ok {
			return v, ".env (" + cfg.DotEnvPath + ")", true
		}
		return "", "default", false
	}
	str := func(key, def string) string {
		v, src, ok := lookup(key)
		if !ok {
			v = def
		}
		cfg.Sources[key] = src
		return v
	}

	cfg.postgresURL = str(KeyPostgresURL, "")
	cfg.apiKey = str(KeyAPIKey, "")
	if v, ok := getenv(KeyOTLPEndpoint); ok { // the process environment only, as telemetry reads it
		cfg.otlp, cfg.Sources[KeyOTLPEndpoint] = v, "env"
	} else {
		cfg.Sources[KeyOTLPEndpoint] = "default"
	}

	// Database: REMSTORE_DB (flag or any layer) wins over the peer's variable.
	if v, src, ok := lookup(KeyDB); ok && v != "" {
		cfg.DatabaseURL, cfg.Sources[KeyDB] = v, src
	} else if v, src, ok := lookup(KeyPostgresURL); ok && v != "" {
		cfg.DatabaseURL, cfg.Sources[KeyDB] = v, src+" via "+KeyPostgresURL
	} else {
		cfg.DatabaseURL, cfg.Sources[KeyDB] = DefaultSQLitePath(), "default"
	}

	// The peer reads anything but "true" (any case) as off, so a typo
	// ("flase", "ture") would switch storage off in silence. Only the two
	// words are taken, in any case and nothing around them: each means the
	// same here as in the peer. Anything else is off as the peer reads it,
	// and Validate refuses it.
	enabled := str(KeyPostgresEnabled, "true")
	cfg.StorageEnabled = strings.EqualFold(enabled, "true")
	if !cfg.StorageEnabled && !strings.EqualFold(enabled, "false") {
		cfg.badEnabled = &enabled
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf(
			"%s=%q is neither true nor false; storage is off", KeyPostgresEnabled, enabled))
	}

	cfg.UserID = str(KeyUserID, DefaultUserID)
	tl := str(KeyTruncateLength, strconv.Itoa(DefaultTruncateLength))
	n, err := strconv.Atoi(strings.TrimSpace(tl))
	if err != nil {
		n = -1 // Validate reports it with the setting's name
		cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s=%q is not an integer", KeyTruncateLength, tl))
	}
	cfg.TruncateLength = n
	cfg.APIKeys = str(KeyAPIKeys, "")
	cfg.Addr = str(KeyAddr, DefaultAddr)
	cfg.TraceURL = str(KeyTraceURL, "")
	for key, dst := range map[string]*int{KeyMaxSessionMsgs: &cfg.MaxSessionMessages, KeyMaxSessions: &cfg.MaxSessions} {
		v := strings.TrimSpace(str(key, "0"))
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			n = -1 // Validate names the setting
		}
		*dst = n
	}
	cfg.URL = str(KeyURL, LocalURL(cfg.Addr))
	cfg.AuditEnabled = str(KeyAuditSession, "") != ""
	cfg.AuditDir = str(KeyAuditDir, DefaultAuditDir())
	cfg.LogLevel = strings.ToLower(str(KeyLogLevel, DefaultLogLevel))
	for key, dst := range map[string]*time.Duration{KeyConnectTimeout: &cfg.ConnectTimeout, KeyStatementTimeout: &cfg.StatementTimeout} {
		def := "0s"
		if key == KeyConnectTimeout {
			def = "10s"
		}
		v := str(key, def)
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			d = -1 // Validate names the setting
		}
		*dst = d
	}
	// A .env is remstore's own file: a REMSTORE_ name it does not know is
	// a typo or a setting from another version, and would be ignored in
	// silence (issue 43: REMSTORE_ADDR was). The process environment is
	// shared with other programs, so only the file is checked.
	for key := range dotenv {
		if strings.HasPrefix(key, "REMSTORE_") && !known(key) {
			cfg.Warnings = append(cfg.Warnings, fmt.Sprintf("%s sets %s, which remstore does not read%s",
				cfg.DotEnvPath, key, models.DidYouMean(key, names())))
		}
	}
	return cfg, nil
}

// Shown is every variable of Variables, in its order, with the value in
// effect (secrets masked: passwords in URLs, API keys) and where it came
// from: what `remstore env` prints. Each variable is written once, in
// Variables; a variable without a value here fails TestShownListsEvery.
func (c Config) Shown() (rows []ShownSetting) {
	for _, v := range Variables() {
		var val string
		switch v.Name {
		case KeyDB:
			val = MaskURL(c.DatabaseURL)
		case KeyPostgresURL:
			val = MaskURL(c.postgresURL)
		case KeyPostgresEnabled:
			val = strconv.FormatBool(c.StorageEnabled)
		case KeyUserID:
			val = c.UserID
		case KeyTruncateLength:
			val = strconv.Itoa(c.TruncateLength)
		case KeyLogLevel:
			val = c.LogLevel
		case KeyConnectTimeout:
			val = c.ConnectTimeout.String()
		case KeyStatementTimeout:
			val = c.StatementTimeout.String()
		case KeyAuditSession:
			val = strconv.FormatBool(c.AuditEnabled)
		case KeyAuditDir:
			val = c.AuditDir
		case KeyAPIKeys:
			val = maskKeys(c.APIKeys)
		case KeyAddr:
			val = c.Addr
		case KeyURL:
			val = c.URL
		case KeyAPIKey:
			val = maskKeys(c.apiKey)
		case KeyMaxSessionMsgs:
			val = strconv.Itoa(c.MaxSessionMessages)
		case KeyMaxSessions:
			val = strconv.Itoa(c.MaxSessions)
		case KeyOTLPEndpoint:
			val = c.otlp
		case KeyTraceURL:
			val = c.TraceURL
		default:
			continue
		}
		rows = append(rows, ShownSetting{Name: v.Name, Value: val, Source: c.Sources[v.Name]})
	}
	return rows
}

// ShownSetting is one line of Shown.
type ShownSetting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// maskKeys shows how many API keys are set, never a key.
func maskKeys(raw string) string {
	n := 0
	for _, k := range strings.Split(raw, ",") {
		if strings.TrimSpace(k) != "" {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "(1 key, masked)"
	}
	return fmt.Sprintf("(%d keys, masked)", n)
}

// LocalURL is the URL a client on the same machine reaches addr by: an
// unspecified host (":8088", "0.0.0.0:8088") is reached on loopback.
func LocalURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Validate checks every value and returns one error naming each bad setting.
func (c Config) Validate() error {
	var errs []error
	if c.badEnabled != nil {
		errs = append(errs, fmt.Errorf("%s: %q is neither true nor false: set true to store, false to turn storage off (either in any case)",
			c.Origin(KeyPostgresEnabled), *c.badEnabled))
	}
	if c.TruncateLength < 1 || c.TruncateLength > MaxTruncateLength {
		errs = append(errs, fmt.Errorf("%s: must be an integer from 1 to %d", c.Origin(KeyTruncateLength), MaxTruncateLength))
	}
	for _, k := range []struct {
		key string
		v   int
	}{{KeyMaxSessionMsgs, c.MaxSessionMessages}, {KeyMaxSessions, c.MaxSessions}} {
		if k.v < 0 {
			errs = append(errs, fmt.Errorf("%s: must be a whole number (0: no limit)", c.Origin(k.key)))
		}
	}
	if err := ValidateDatabaseURL(c.DatabaseURL); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", c.Origin(KeyDB), err))
	}
	if strings.TrimSpace(c.UserID) == "" {
		errs = append(errs, fmt.Errorf("%s: must not be empty", c.Origin(KeyUserID)))
	}
	if c.ConnectTimeout < 0 {
		errs = append(errs, fmt.Errorf("%s: must be a duration like 5s", c.Origin(KeyConnectTimeout)))
	}
	if c.StatementTimeout < 0 {
		errs = append(errs, fmt.Errorf("%s: must be a duration like 30s (0 for none)", c.Origin(KeyStatementTimeout)))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("%s: %q is not one of debug, info, warn, error", c.Origin(KeyLogLevel), c.LogLevel))
	}
	return errors.Join(errs...)
}

// IsPostgres reports whether a database URL names PostgreSQL: a
// postgres:// (or postgresql://) URL, or a keyword/value connection string
// (`host=db.internal dbname=app user=app password=...`) as libpq and pgx
// take it.
func IsPostgres(dbURL string) bool {
	return strings.HasPrefix(dbURL, "postgres://") || strings.HasPrefix(dbURL, "postgresql://") || IsKeywordDSN(dbURL)
}

// keywordDSN matches the start of a keyword/value connection string: one of
// libpq's keywords and "=". A SQLite path does not start so.
var keywordDSN = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|passfile|sslmode|sslrootcert|sslcert|sslkey|sslpassword|service|application_name|connect_timeout|options|target_session_attrs|pool_[a-z_]+)\s*=`)

// IsKeywordDSN reports whether s is a keyword/value connection string.
func IsKeywordDSN(s string) bool { return keywordDSN.MatchString(s) }

// dsnPassword matches a password in a keyword/value string: a bare value or
// a single-quoted one with backslash escapes (libpq's rules).
var dsnPassword = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'?|\S*)`)

// ValidateDatabaseURL checks the shape of a database URL or SQLite path.
func ValidateDatabaseURL(dbURL string) error {
	if strings.TrimSpace(dbURL) == "" {
		return errors.New("empty database URL")
	}
	if strings.ContainsRune(dbURL, 0) {
		return errors.New("database URL contains a NUL byte")
	}
	if IsKeywordDSN(dbURL) {
		return nil // pgx parses it when the database is opened; its errors are masked there
	}
	if IsPostgres(dbURL) {
		u, err := url.Parse(dbURL)
		if err != nil {
			return fmt.Errorf("invalid PostgreSQL URL %s", MaskURL(dbURL))
		}
		if u.Host == "" && u.Query().Get("host") == "" {
			return fmt.Errorf("PostgreSQL URL %s has no host", MaskURL(dbURL))
		}
		return nil
	}
	if i := strings.Index(dbURL, "://"); i > 0 && !strings.HasPrefix(dbURL, "file:") {
		return fmt.Errorf("unsupported database scheme %q (use postgres:// or a SQLite file path)", dbURL[:i])
	}
	if fi, err := os.Stat(dbURL); err == nil && fi.IsDir() {
		// SQLite's own word is "unable to open database file (14)".
		return fmt.Errorf("%s is a directory: give the path of a SQLite file, such as %s", dbURL, filepath.Join(dbURL, "remstore.db"))
	}
	return nil
}

// MaskURL hides the password of a database URL or keyword/value string,
// for logs, errors and `remstore env`.
func MaskURL(dbURL string) string {
	if IsKeywordDSN(dbURL) {
		return dsnPassword.ReplaceAllString(dbURL, "${1}xxxxx")
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		// Unparseable: hide everything between "://" and "@".
		if i, j := strings.Index(dbURL, "://"), strings.LastIndex(dbURL, "@"); i >= 0 && j > i {
			return dbURL[:i+3] + "***" + dbURL[j:]
		}
		return dbURL
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// FindDotEnv returns the nearest .env in dir or up to four of its parents.
func FindDotEnv(dir string) string {
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return ""
		}
	}
	dir, _ = filepath.Abs(dir)
	for range 5 {
		p := filepath.Join(dir, ".env")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// DefaultSQLitePath is remstore.db in the user's data directory:
// $XDG_DATA_HOME/remstore, else ~/.local/share/remstore (Linux and BSD),
// ~/Library/Application Support/remstore (macOS), %LocalAppData%\remstore
// (Windows); the temp directory when no home is known.
func DefaultSQLitePath() string {
	return filepath.Join(dataDir(), "remstore", "remstore.db")
}

func dataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	switch runtime.GOOS {
	case "windows":
		if d := os.Getenv("LocalAppData"); d != "" {
			return d
		}
	case "darwin":
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, "Library", "Application Support")
		}
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "share")
	}
	return os.TempDir()
}

// DefaultAuditDir is where audit dumps go without DEBUG_AUDIT_DIR:
// $XDG_STATE_HOME/remstore/audit, else ~/.local/state/remstore/audit (the
// audit package creates it 0700).
func DefaultAuditDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "remstore", "audit")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "state", "remstore", "audit")
	}
	return filepath.Join(dataDir(), "remstore", "audit")
}

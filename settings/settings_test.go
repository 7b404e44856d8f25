package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("REMSTORE_USER_ID=dot\nREMSTORE_TRUNCATE_LENGTH=11\nREMSTORE_LOG_LEVEL=info\nPOSTGRES__CONNECTION_STRING=postgres://u:p@h/db\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Options{Dir: dir, Flags: map[string]string{KeyUserID: "flag"},
		Getenv: env(map[string]string{KeyUserID: "env", KeyTruncateLength: "12"})})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UserID != "flag" || cfg.TruncateLength != 12 || cfg.LogLevel != "info" || cfg.DatabaseURL != "postgres://u:p@h/db" {
		t.Errorf("%+v", cfg)
	}
	if cfg.Sources[KeyUserID] != "flag" || cfg.Sources[KeyTruncateLength] != "env" || !strings.HasPrefix(cfg.Sources[KeyLogLevel], ".env") ||
		!strings.Contains(cfg.Sources[KeyDB], KeyPostgresURL) {
		t.Errorf("sources %v", cfg.Sources)
	}
	// REMSTORE_DB beats the peer's variable, whatever layer each is in.
	cfg, _ = Load(Options{Dir: dir, Getenv: env(map[string]string{KeyDB: "/tmp/x.db"})})
	if cfg.DatabaseURL != "/tmp/x.db" {
		t.Errorf("db %s", cfg.DatabaseURL)
	}
	cfg, _ = Load(Options{NoDotEnv: true, Getenv: env(nil)})
	if cfg.DatabaseURL != DefaultSQLitePath() || cfg.UserID != DefaultUserID || cfg.TruncateLength != 200 || !cfg.StorageEnabled || cfg.AuditEnabled {
		t.Errorf("defaults %+v", cfg)
	}
}

func TestDotEnvDiscovery(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	deep := filepath.Join(root, "1", "2", "3", "4", "5")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(root, ".env"), []byte("X=1\n"), 0o600)
	if got := FindDotEnv(filepath.Join(root, "1", "2", "3", "4")); got != filepath.Join(root, ".env") {
		t.Errorf("four levels up: %q", got)
	}
	if got := FindDotEnv(deep); got == filepath.Join(root, ".env") {
		t.Errorf("five levels up must not be found")
	}
	_ = os.WriteFile(filepath.Join(root, "1", ".env"), []byte("X=2\n"), 0o600)
	if got := FindDotEnv(filepath.Join(root, "1", "2")); got != filepath.Join(root, "1", ".env") {
		t.Errorf("nearest first: %q", got)
	}
}

// POSTGRES_ENABLED takes true and false in any case, as the peer reads
// them; anything else (a typo, the peer's "off" for 1 or yes) is refused by
// Validate naming the variable and the two values, where it used to warn and
// turn storage off.
func TestPostgresEnabled(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		value   string
		set     bool
		enabled bool
		refused bool
	}{
		{set: false, enabled: true},
		{value: "true", set: true, enabled: true},
		{value: "TRUE", set: true, enabled: true},
		{value: "True", set: true, enabled: true},
		{value: "false", set: true},
		{value: "FALSE", set: true},
		{value: "False", set: true},
		{value: "flase", set: true, refused: true},
		{value: "ture", set: true, refused: true},
		{value: "", set: true, refused: true},
		{value: " true", set: true, refused: true}, // the peer reads it as off
		{value: "1", set: true, refused: true},     // the peer reads it as off
		{value: "0", set: true, refused: true},
		{value: "yes", set: true, refused: true}, // the peer reads it as off
		{value: "no", set: true, refused: true},
		{value: "on", set: true, refused: true}, // the peer reads it as off
		{value: "off", set: true, refused: true},
	} {
		e := map[string]string{}
		if c.set {
			e[KeyPostgresEnabled] = c.value
		}
		cfg, err := Load(Options{NoDotEnv: true, Getenv: env(e)})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.StorageEnabled != c.enabled {
			t.Errorf("POSTGRES_ENABLED=%q: enabled %v, want %v", c.value, cfg.StorageEnabled, c.enabled)
		}
		err = cfg.Validate()
		if !c.refused {
			if err != nil {
				t.Errorf("POSTGRES_ENABLED=%q: refused: %v", c.value, err)
			}
			continue
		}
		want := KeyPostgresEnabled + ` (from env): "` + c.value + `" is neither true nor false`
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "true to store, false to turn storage off") {
			t.Errorf("POSTGRES_ENABLED=%q: Validate = %v, want an error containing %q and the two values", c.value, err, want)
		}
	}
	// From .env the error names the file the value came from.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("POSTGRES_ENABLED=flase\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(Options{Dir: dir, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), KeyPostgresEnabled+" (from .env ("+filepath.Join(dir, ".env")+`)): "flase"`) {
		t.Errorf(".env POSTGRES_ENABLED=flase: %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := map[string]map[string]string{
		KeyTruncateLength: {KeyTruncateLength: "0"},
		KeyDB:             {KeyDB: "mysql://x"},
		KeyLogLevel:       {KeyLogLevel: "loud"},
	}
	for name, e := range cases {
		cfg, _ := Load(Options{NoDotEnv: true, Getenv: env(e)})
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "\n\n") {
			t.Errorf("%v: %v", e, err)
		}
	}
	cfg, _ := Load(Options{NoDotEnv: true, Getenv: env(map[string]string{KeyTruncateLength: "abc"})})
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), KeyTruncateLength) {
		t.Errorf("non-integer truncate length: %v", err)
	}
}

func TestMaskURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://u:secret@h:5432/db":       "postgres://u:xxxxx@h:5432/db",
		"postgres://h/db?password=secret&x=1": "postgres://h/db?password=xxxxx&x=1",
		"postgres://u@h/db":                   "postgres://u@h/db",
		"/var/lib/remstore.db":                "/var/lib/remstore.db",
		"postgres://u:sec ret@h/db%zz":        "postgres://***@h/db%zz",
		// keyword/value strings, libpq's quoting
		"host=h password=secret dbname=db":         "host=h password=xxxxx dbname=db",
		"host=h password = 'with space' dbname=db": "host=h password = xxxxx dbname=db",
		`host=h password='it\'s' user=u`:           "host=h password=xxxxx user=u",
		"dbname=db password=":                      "dbname=db password=xxxxx",
		"host=h user=u":                            "host=h user=u",
		"password=secret host=h password=again":    "password=xxxxx host=h password=xxxxx",
	} {
		if got := MaskURL(in); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestIsPostgres(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"postgres://h/db": true, "postgresql://h/db": true,
		"host=/tmp dbname=x": true, " dbname=x": true, "user=u password=p host=h": true,
		"/var/lib/remstore.db": false, "remstore.db": false, "host.db": false, "my=file.db": false, ":memory:": false,
	} {
		if got := IsPostgres(in); got != want {
			t.Errorf("IsPostgres(%q) = %v, want %v", in, got, want)
		}
	}
}

package repository

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// The messages are what pgx 5.12 printed for these failures on this machine.
func TestConnectErrorSaysEachReasonOnce(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"failed to connect to `user=u database=db`:\n\t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused\n\t127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused",
			"failed to connect to `user=u database=db`: 127.0.0.1:1 (127.0.0.1): dial error: dial tcp 127.0.0.1:1: connect: connection refused (is PostgreSQL running and listening there? pg_isready -h HOST -p PORT tells)"},
		{"failed to connect to `user=u database=db`:\n\thostname resolving error: lookup nohost.invalid on 10.255.255.53:53: no such host\n\tlookup nohost.invalid on 10.255.255.53:53: no such host",
			"failed to connect to `user=u database=db`: hostname resolving error: lookup nohost.invalid on 10.255.255.53:53: no such host (check the host name in the connection string)"},
		{"failed to connect to `user=u database=db`:\n\t10.0.0.1:5432 (10.0.0.1): tls error: server refused TLS connection\n\t10.0.0.1:5432 (10.0.0.1): server error: FATAL: password authentication failed for user \"u\" (SQLSTATE 28P01)",
			"failed to connect to `user=u database=db`: 10.0.0.1:5432 (10.0.0.1): server error: FATAL: password authentication failed for user \"u\" (SQLSTATE 28P01) (check the user name and the password)"},
		{"failed to connect to `user=postgres database=postgres`:\n\t127.0.0.1:6432 (127.0.0.1): server error: FATAL: unsupported startup parameter: statement_timeout (SQLSTATE 08P01)",
			"failed to connect to `user=postgres database=postgres`: 127.0.0.1:6432 (127.0.0.1): server error: FATAL: unsupported startup parameter: statement_timeout (SQLSTATE 08P01) (a pooler such as PgBouncer refuses it: set it on the role (ALTER ROLE ... SET) or in its ignore_startup_parameters; docs/operations.md)"},
		{"failed to connect to `user=u database=db`:\n\t10.0.0.1:5432 (10.0.0.1): tls error: server refused TLS connection",
			"failed to connect to `user=u database=db`: 10.0.0.1:5432 (10.0.0.1): tls error: server refused TLS connection (the server does not speak TLS: use sslmode=disable or sslmode=prefer)"},
		{"failed to connect to `user=u database=db`: /tmp/nosock/.s.PGSQL.5432 (/tmp/nosock): dial error: dial unix /tmp/nosock/.s.PGSQL.5432: connect: no such file or directory",
			"failed to connect to `user=u database=db`: /tmp/nosock/.s.PGSQL.5432 (/tmp/nosock): dial error: dial unix /tmp/nosock/.s.PGSQL.5432: connect: no such file or directory (no server socket in that directory: is PostgreSQL running, and is host= its socket directory?)"},
	} {
		if got := connectError(errors.New(c.raw)); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// From outside: a refused connection, in URL and keyword form, says so
// once, with the hint, and never the password.
func TestOpenErrorsAreOneReasonNoPassword(t *testing.T) {
	for _, dsn := range []string{"postgres://u:s3cret-pw@127.0.0.1:1/db?connect_timeout=2", "host=127.0.0.1 port=1 user=u password=s3cret-pw dbname=db connect_timeout=2"} {
		_, err := Open(context.Background(), dsn)
		if err == nil {
			t.Fatalf("%s: connected", dsn)
		}
		msg := err.Error()
		if strings.Contains(msg, "s3cret") || strings.Count(msg, "connection refused") != 1 || !strings.Contains(msg, "pg_isready") || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %s", dsn, msg)
		}
	}
}

// A SQLite path into a folder that does not exist is a typo to fix, not a
// database to migrate: the error says which folder, and nothing is created.
func TestMissingSQLiteFolderIsNotUnmigrated(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/no/such/folder/remstore.db"
	for _, o := range []Options{{ReadOnly: true}, {}} {
		_, err := OpenWith(context.Background(), path, o)
		if err == nil || errors.Is(err, ErrNotMigrated) || strings.Contains(err.Error(), "migrate up") ||
			!strings.Contains(err.Error(), dir+"/no/such/folder") || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	if _, err := os.Stat(dir + "/no"); !os.IsNotExist(err) {
		t.Errorf("a folder was created: %v", err)
	}
}

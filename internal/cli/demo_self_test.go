package cli

import "testing"

// The demo's next steps name a command that works from where the user
// stands: after `go run` the binary is gone (its hint named `remstore load`,
// not on PATH); an installed one by its name, another path as given.
func TestSelfCommand(t *testing.T) {
	for argv0, want := range map[string]string{
		"/tmp/go-build1234567/b001/exe/remstore": "go run ./cmd/remstore",
		// go run's second time: the executable cached in GOCACHE, here
		// not under a folder named go-build.
		"/root/.cache/go-build/53/53e9653bb80b93b4bc8c3c0ca02b4f4eafc47abfeb56f8d8d0dd13dfcf01e5a9-d/remstore": "go run ./cmd/remstore",
		"/srv/gocache/53/53e9653bb80b93b4bc8c3c0ca02b4f4eafc47abfeb56f8d8d0dd13dfcf01e5a9-d/remstore":          "go run ./cmd/remstore",
		"/opt/53/tools/remstore":  "/opt/53/tools/remstore",
		"remstore":                "remstore",
		"/usr/local/bin/remstore": "/usr/local/bin/remstore",
		"./bin/remstore":          "./bin/remstore",
		"":                        "remstore",
	} {
		if got := selfCommand(argv0); got != want {
			t.Errorf("selfCommand(%q) = %q, want %q", argv0, got, want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/demo.db":                 "/tmp/demo.db",
		"postgres://u@db:5432/app?x=1": "'postgres://u@db:5432/app?x=1'",
		"my file.db":                   "'my file.db'",
		"it's.db":                      `'it'\''s.db'`,
		"":                             "''",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

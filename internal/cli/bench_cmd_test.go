package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBenchFlagErrors: each bad flag is refused before anything runs, by
// an error that names that flag alone.
func TestBenchFlagErrors(t *testing.T) {
	ok := func() benchOpts {
		return benchOpts{iters: 30, only: strings.Join(benchParts, ","), httpClients: 8}
	}
	for _, c := range []struct {
		name string
		set  func(*benchOpts)
		want string
	}{
		{"iterations", func(o *benchOpts) { o.iters = 0 }, "--iterations must be >= 1"},
		{"only", func(o *benchOpts) { o.only = "workloads,bogus" }, `--only: "bogus" is not one of`},
		{"http-clients", func(o *benchOpts) { o.httpClients = 0 }, "--http-clients must be >= 1"},
		{"duration", func(o *benchOpts) { o.duration = -time.Second }, "--duration must not be negative"},
		{"json", func(o *benchOpts) { o.jsonFile = filepath.Join(t.TempDir(), "none", "bench.json") }, "--json: open "},
		{"svg", func(o *benchOpts) { o.svgFile = filepath.Join(t.TempDir(), "none", "lookup.svg") }, "--svg: open "},
	} {
		o := ok()
		c.set(&o)
		_, _, err := o.check()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// Paths that can be written are checked without leaving a file, or
	// touching one that is there.
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.json")
	if err := os.WriteFile(kept, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := ok()
	o.jsonFile, o.svgFile = kept, filepath.Join(dir, "new.svg")
	if _, stop, err := o.check(); err != nil {
		t.Fatal(err)
	} else {
		stop()
	}
	if b, err := os.ReadFile(kept); err != nil || string(b) != "{}" {
		t.Errorf("kept.json after the check: %q, %v", b, err)
	}
	if _, err := os.Stat(o.svgFile); !os.IsNotExist(err) {
		t.Errorf("new.svg left by the check: %v", err)
	}
}

// A statement count not taken (-1) prints as "-", as in the docs' tables.
func TestBenchCount(t *testing.T) {
	if got := count(-1) + "/" + count(0) + "/" + count(25); got != "-/0/25" {
		t.Errorf("counts -1, 0, 25: %q", got)
	}
}

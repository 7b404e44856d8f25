package cli

import (
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
	} {
		o := ok()
		c.set(&o)
		_, _, err := o.check()
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	o := ok()
	if _, stop, err := o.check(); err != nil {
		t.Fatal(err)
	} else {
		stop()
	}
}

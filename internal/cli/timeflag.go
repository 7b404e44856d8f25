package cli

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// timeFlag is a flag holding a point in time: RFC 3339 (2026-01-15T10:30:00Z)
// or a date (2026-01-15, midnight UTC). pflag's own TimeVar answered
// "tomorrow" with Go's layout string ("2006-01-02T15:04:05Z07:00"), which
// says nothing to someone who has not read Go's time package.
type timeFlag struct{ t *time.Time }

func (f timeFlag) String() string {
	if f.t == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f timeFlag) Set(s string) error {
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			*f.t = t
			return nil
		}
	}
	return fmt.Errorf("not a time: give one like 2026-01-15T10:30:00Z (RFC 3339, with its offset) or a date like 2026-01-15")
}

func (timeFlag) Type() string { return "time" }

// timeVar defines a timeFlag.
func timeVar(fs *pflag.FlagSet, p *time.Time, name, usage string) {
	fs.Var(timeFlag{p}, name, usage+": RFC 3339 (2026-01-15T10:30:00Z) or a date (2026-01-15, UTC)")
}

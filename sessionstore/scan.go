package sessionstore

import (
	"fmt"
	"time"
)

// dbTime scans a timestamp from either driver: pgx gives time.Time, SQLite
// gives the text bun wrote (UTC, "2006-01-02 15:04:05.999999-07:00") or
// what CURRENT_TIMESTAMP wrote ("2006-01-02 15:04:05").
type dbTime struct {
	Time  time.Time
	Valid bool
}

var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
}

// Scan implements sql.Scanner.
func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*t = dbTime{}
		return nil
	case time.Time:
		*t = dbTime{Time: v.UTC(), Valid: true}
		return nil
	case []byte:
		return t.parse(string(v))
	case string:
		return t.parse(v)
	}
	return fmt.Errorf("scan time: unsupported type %T", src)
}

func (t *dbTime) parse(s string) error {
	for _, l := range timeLayouts {
		if v, err := time.Parse(l, s); err == nil {
			*t = dbTime{Time: v.UTC(), Valid: true}
			return nil
		}
	}
	return fmt.Errorf("scan time: cannot parse %q", s)
}

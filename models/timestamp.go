package models

import "time"

// FormatTimestamp prints t the way Python's datetime.isoformat() prints an
// aware UTC datetime: microseconds only when they are not zero, and the
// offset as +00:00 (never Z). The peer's clients compare these strings.
func FormatTimestamp(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// ParseTimestamp reads an ISO-8601 timestamp as Python's
// datetime.fromisoformat does for the forms agents send: with or without
// fractional seconds, with an offset or Z, or naive (read as UTC).
func ParseTimestamp(s string) (time.Time, error) {
	layouts := []string{
		time.RFC3339Nano,
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999",
		"2006-01-02",
	}
	var err error
	for _, l := range layouts {
		var t time.Time
		if t, err = time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, err
}

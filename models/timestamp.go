package models

import "time"

// FormatTimestamp prints t the way Python's datetime.isoformat() prints an
// aware UTC datetime: microseconds only when they are not zero, and the
// offset as +00:00 (never Z). The Python service's clients compare these strings.
//
// Every message of a load is printed, so the digits are written here
// rather than by time.Format's layout interpreter (a third of a small
// load's Go time); years outside 0–9999 take the layout.
// FuzzFormatTimestamp holds the two equal.
func FormatTimestamp(t time.Time) string {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return formatLayout(t)
	}
	hour, minute, sec := t.Clock()
	us := t.Nanosecond() / 1000
	var b [32]byte
	digits(b[0:4], year)
	b[4] = '-'
	digits(b[5:7], int(month))
	b[7] = '-'
	digits(b[8:10], day)
	b[10] = 'T'
	digits(b[11:13], hour)
	b[13] = ':'
	digits(b[14:16], minute)
	b[16] = ':'
	digits(b[17:19], sec)
	n := 19
	if us != 0 {
		b[19] = '.'
		digits(b[20:26], us)
		n = 26
	}
	n += copy(b[n:], "+00:00")
	return string(b[:n])
}

// formatLayout is FormatTimestamp by time.Format.
func formatLayout(t time.Time) string {
	t = t.UTC().Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05+00:00")
	}
	return t.Format("2006-01-02T15:04:05.000000+00:00")
}

// digits writes v into b as len(b) decimal digits, zero-padded.
func digits(b []byte, v int) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte('0' + v%10)
		v /= 10
	}
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

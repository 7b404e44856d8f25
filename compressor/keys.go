package compressor

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxKeyLength is the longest key, in code points; longer keys are cut to
// their first 246 code points + "-" + 8 hex digits of the MD5 of the whole key.
const MaxKeyLength = 255

const keyHashLen = 8

// BuildKey returns session-{sessionID}-msg-{n}, cut to MaxKeyLength.
func BuildKey(sessionID string, n int) string {
	return TruncateKey("session-" + sessionID + "-msg-" + strconv.Itoa(n))
}

// TruncateKey cuts a key longer than MaxKeyLength code points as the Python service
// does: key[:246] + "-" + md5(key UTF-8)[:8].
func TruncateKey(key string) string {
	if utf8.RuneCountInString(key) <= MaxKeyLength {
		return key
	}
	sum := md5.Sum([]byte(key))
	head, _ := splitRunes(key, MaxKeyLength-keyHashLen-1, MaxKeyLength-keyHashLen-1)
	return head + "-" + hex.EncodeToString(sum[:])[:keyHashLen]
}

// Key is a parsed REM LOOKUP key.
type Key struct {
	Raw       string // the key itself, without any "REM LOOKUP" phrase or quotes
	SessionID string // "" when Opaque
	Index     int    // -1 when Opaque
	// Opaque is true for keys cut to MaxKeyLength with the MD5 suffix: they
	// name no session or index and can only be matched as a whole.
	Opaque bool
}

// ErrBadKey is wrapped by every ParseKey error.
var ErrBadKey = errors.New("bad REM LOOKUP key")

func badKey(reason string) error { return fmt.Errorf("%w: %s", ErrBadKey, reason) }

// ParseKey reads a key given bare or as "REM LOOKUP <key>" / "LOOKUP <key>",
// with optional surrounding quotes and whitespace.
func ParseKey(s string) (Key, error) {
	if !utf8.ValidString(s) {
		return Key{}, badKey("not valid UTF-8")
	}
	k := unquote(strings.TrimSpace(s))
	k = stripPhrase(k)
	k = unquote(strings.TrimSpace(k))
	if k == "" {
		return Key{}, badKey("empty key")
	}
	if i := strings.IndexFunc(k, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return Key{}, badKey(fmt.Sprintf("whitespace or control character at byte %d", i))
	}
	if !strings.HasPrefix(k, "session-") {
		return Key{}, badKey(`must start with "session-"`)
	}
	n := utf8.RuneCountInString(k)
	if n > MaxKeyLength {
		return Key{}, badKey(fmt.Sprintf("longer than %d code points (%d)", MaxKeyLength, n))
	}
	id, idx, natural := parseNatural(k)
	if natural {
		return Key{Raw: k, SessionID: id, Index: idx}, nil
	}
	if n == MaxKeyLength && isHashSuffix(k) {
		return Key{Raw: k, Index: -1, Opaque: true}, nil
	}
	return Key{}, badKey(`must have the form session-<id>-msg-<n>`)
}

func parseNatural(k string) (string, int, bool) {
	i := strings.LastIndex(k, "-msg-")
	if i < 0 {
		return "", 0, false
	}
	id, num := k[len("session-"):max(i, len("session-"))], k[i+len("-msg-"):]
	if id == "" || num == "" || len(num) > 9 || (len(num) > 1 && num[0] == '0') {
		return "", 0, false
	}
	for _, r := range num {
		if r < '0' || r > '9' {
			return "", 0, false
		}
	}
	n, err := strconv.Atoi(num)
	return id, n, err == nil
}

func isHashSuffix(k string) bool {
	if len(k) < keyHashLen+1 || k[len(k)-keyHashLen-1] != '-' {
		return false
	}
	for _, c := range k[len(k)-keyHashLen:] {
		if !strings.ContainsRune("0123456789abcdef", c) {
			return false
		}
	}
	return true
}

func unquote(s string) string {
	for _, q := range []string{`"`, `'`, "`"} {
		if len(s) >= 2 && strings.HasPrefix(s, q) && strings.HasSuffix(s, q) {
			return strings.TrimSpace(s[1 : len(s)-1])
		}
	}
	return s
}

// stripPhrase removes a leading "REM LOOKUP" or "LOOKUP" (any case).
func stripPhrase(s string) string {
	f := strings.Fields(s)
	switch {
	case len(f) >= 2 && strings.EqualFold(f[0], "REM") && strings.EqualFold(f[1], "LOOKUP"):
		return afterWords(s, 2)
	case len(f) >= 1 && strings.EqualFold(f[0], "LOOKUP"):
		return afterWords(s, 1)
	}
	return s
}

// afterWords returns s without its first n whitespace-separated words.
func afterWords(s string, n int) string {
	for range n {
		s = strings.TrimLeftFunc(s, unicode.IsSpace)
		i := strings.IndexFunc(s, unicode.IsSpace)
		if i < 0 {
			return ""
		}
		s = s[i:]
	}
	return strings.TrimSpace(s)
}

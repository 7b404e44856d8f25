package models

import (
	"strings"
	"testing"
)

// Distances computed by hand: one edit each, a swap counted once.
func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3},
		{"contnet", "content", 1}, // swap
		{"asistant", "assistant", 1},
		{"tol", "tool", 1},
		{"bot", "tool", 3}, // b→t, t→o, +l
		{"usr", "user", 1},
		{"kitten", "sitting", 3},
		{"日本", "本日", 1},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	roles := []string{"user", "assistant", "tool", "system", "function", "model"}
	for _, c := range []struct{ in, want string }{
		{"USER", `; did you mean "user"?`},
		{"Assistant", `; did you mean "assistant"?`},
		{"asistant", `; did you mean "assistant"?`},
		{"bot", ""}, // three edits from tool: too far for a 4-letter word
		{"critic", ""},
		{"user", ""}, // itself is no suggestion
		{"", ""},
	} {
		if got := DidYouMean(c.in, roles); got != c.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestCheckRole(t *testing.T) {
	for _, r := range roles {
		if err := CheckRole(0, r); err != nil {
			t.Errorf("%s: %v", r, err)
		}
	}
	err := CheckRole(3, "USER")
	want := `message 3: field "role": "USER" is not a role; the roles are user, assistant, tool, system, function, model; did you mean "user"?`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func FuzzDidYouMean(f *testing.F) {
	f.Add("contnet")
	f.Add("日本語")
	f.Fuzz(func(t *testing.T, s string) {
		near := Nearest(s, []string{"content", "role", "timestamp"})
		if near != "" && editDistance(s, near) > len([]rune(near))/3+1 && !strings.EqualFold(s, near) {
			t.Fatalf("%q suggested for %q", near, s)
		}
	})
}

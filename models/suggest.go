package models

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DidYouMean returns `; did you mean "x"?` for the option nearest to s, or
// "" when none is near: the same word in another case, or one at most a
// third of its length of edits away (a swap of two neighbours is one edit),
// so "contnet" finds content and "bot" finds nothing.
func DidYouMean(s string, options []string) string {
	if near := Nearest(s, options); near != "" {
		return fmt.Sprintf("; did you mean %q?", near)
	}
	return ""
}

// Nearest is DidYouMean's choice: the nearest option, or "".
func Nearest(s string, options []string) string {
	best, bestD := "", -1
	for _, o := range options {
		if o == s {
			continue
		}
		if strings.EqualFold(o, s) {
			return o
		}
		limit := utf8.RuneCountInString(o) / 3
		if limit < 1 {
			limit = 1
		}
		if d := editDistance(s, o); d <= limit && (bestD < 0 || d < bestD) {
			best, bestD = o, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b in
// code points: insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	if len(x) > 64 || len(y) > 64 { // a typo of a key is short; a long value is no typo
		return 1 << 30
	}
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

// quoteShort quotes s for an error message, cut to 60 code points.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > 60 {
		s = string(r[:60]) + "…"
	}
	return strconv.Quote(s)
}

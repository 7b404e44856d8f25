package remopenai

import "fmt"

func field(list string, j int, key string) string { return fmt.Sprintf("%s[%d].%s", list, j, key) }

func short(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

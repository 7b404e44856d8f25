package remopenai

import "fmt"

func field(list string, j int, key string) string { return fmt.Sprintf("%s[%d].%s", list, j, key) }

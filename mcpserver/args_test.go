package mcpserver

import (
	"fmt"
	"strings"
	"testing"
)

// A tool's arguments with a key twice are refused naming the key, on the
// stdio stream as `remstore mcp` serves it: the SDK would decode the last
// value and act on it, a call other than the one that may have been meant.
// The same arguments with each key once are answered.
func TestDuplicateArgumentKeysRefused(t *testing.T) {
	t.Parallel()
	s := startStream(t)
	for i, c := range []struct {
		tool, args, key string // key: the duplicate, "" for none
	}{
		{"session_history", `{"session_id":"mine","session_id":"theirs"}`, "session_id"},
		{"session_history", `{"session_id":"s","compress":false,"compress":true}`, "compress"},
		{"session_history", `{"session_id":"s","compress":true,"\u0063ompress":false}`, "compress"},
		{"rem_lookup", `{"key":"session-a-msg-1","key":"session-b-msg-1"}`, "key"},
		{"session_history", `{"session_id":"s","compress":false}`, ""},
	} {
		id := fmt.Sprint(100 + i)
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + c.tool + `","arguments":` + c.args + `}}`)
		got := s.until(id)
		res, _ := got[len(got)-1]["result"].(map[string]any)
		isErr, _ := res["isError"].(bool)
		text := fmt.Sprint(res["content"])
		if c.key == "" {
			if res == nil || isErr {
				t.Errorf("%s %s: %v", c.tool, c.args, got[len(got)-1])
			}
			continue
		}
		if res == nil || !isErr || !strings.Contains(text, `duplicate key "`+c.key+`"`) || !strings.Contains(text, "invalid_input") {
			t.Errorf("%s %s: %v, want an invalid_input error naming %q", c.tool, c.args, got[len(got)-1], c.key)
		}
	}
}

package compressor_test

import (
	"fmt"
	"strings"

	"github.com/remstore/remstore/compressor"
	"github.com/remstore/remstore/models"
)

func ExampleCompressor_Compress() {
	c, _ := compressor.New(5)
	msg := models.HistoryMessage{Role: models.RoleAssistant, Content: "Hello, this is a long answer!"}
	out, _ := c.Compress(msg, compressor.BuildKey("abc", 1))
	fmt.Printf("%q\n", out.Content)
	fmt.Println(out.Compressed, out.OriginalLength, out.EntityKey)
	// Output:
	// "Hello\n\n... [Message truncated - REM LOOKUP session-abc-msg-1 to recover full content] ...\n\nswer!"
	// true 29 session-abc-msg-1
}

func ExampleParseKey() {
	k, _ := compressor.ParseKey(`REM LOOKUP "session-550e8400-e29b-41d4-a716-446655440000-msg-7"`)
	fmt.Println(k.SessionID, k.Index)
	long, _ := compressor.ParseKey(compressor.BuildKey(strings.Repeat("x", 300), 7))
	fmt.Println(long.Opaque, len(long.Raw))
	_, err := compressor.ParseKey("session-abc")
	fmt.Println(err)
	// Output:
	// 550e8400-e29b-41d4-a716-446655440000 7
	// true 255
	// bad REM LOOKUP key: must have the form session-<id>-msg-<n>
}

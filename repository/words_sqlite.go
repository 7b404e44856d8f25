package repository

import (
	"database/sql/driver"
	"fmt"

	"modernc.org/sqlite"

	"github.com/remstore/remstore/internal/words"
)

// WordsFunction is the SQLite function the search index's triggers call
// (migration 16): a message's words under internal/words' rule, joined by
// spaces. It lives in Go, so every connection this process opens has it;
// a tool without it (the sqlite3 shell) can read the file, not write
// messages.
const WordsFunction = "remstore_words"

func init() {
	err := sqlite.RegisterDeterministicScalarFunction(WordsFunction, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case nil:
			return "", nil
		case string:
			return words.Index(v), nil
		case []byte:
			return words.Index(string(v)), nil
		default:
			return words.Index(fmt.Sprint(v)), nil
		}
	})
	if err != nil {
		panic(err) // registered twice: a programming error, found by any test
	}
}

package repository_test

import (
	stdjson "encoding/json"
	"strconv"
	"testing"
)

func jsonNumber(n int64) stdjson.Number { return stdjson.Number(strconv.FormatInt(n, 10)) }

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := stdjson.Unmarshal(a, &x); err != nil {
		t.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := stdjson.Unmarshal(b, &y); err != nil {
		t.Fatalf("bad JSON %s: %v", b, err)
	}
	xa, _ := stdjson.Marshal(x)
	ya, _ := stdjson.Marshal(y)
	return string(xa) == string(ya)
}

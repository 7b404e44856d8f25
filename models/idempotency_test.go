package models

import (
	"strings"
	"testing"
)

func TestCheckIdempotencyKey(t *testing.T) {
	if err := CheckIdempotencyKey("turn-2:9f86d081"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a b", "é", "x\x00", strings.Repeat("k", 201)} {
		err := CheckIdempotencyKey(bad)
		if fe, ok := AsFieldError(err); !ok || fe.Field != "Idempotency-Key" {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}

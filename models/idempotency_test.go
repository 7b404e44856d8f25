package models

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestFillIDs(t *testing.T) {
	msgs := func() []HistoryMessage {
		return []HistoryMessage{{Role: "user"}, {Role: "assistant", ID: "11111111-1111-1111-1111-111111111111"}, {Role: "user"}}
	}
	a, b := msgs(), msgs()
	if err := FillIDs(a, "alice\x00s", "k"); err != nil {
		t.Fatal(err)
	}
	if err := FillIDs(b, "alice\x00s", "k"); err != nil {
		t.Fatal(err)
	}
	// Hand-checked: UUIDv5 of the namespace and "alice\0s\0k\0" + index.
	want0 := uuid.NewSHA1(uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://remstore.dev/ns/idempotency-key")), []byte("alice\x00s\x00k\x000")).String()
	if a[0].ID != want0 || a[1].ID != "11111111-1111-1111-1111-111111111111" || a[0].ID == a[2].ID {
		t.Fatalf("ids %q %q %q", a[0].ID, a[1].ID, a[2].ID)
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatalf("message %d: same request, ids %q and %q", i, a[i].ID, b[i].ID)
		}
	}
	for _, other := range [][2]string{{"bob\x00s", "k"}, {"alice\x00t", "k"}, {"alice\x00s", "k2"}} {
		c := msgs()
		if err := FillIDs(c, other[0], other[1]); err != nil || c[0].ID == a[0].ID {
			t.Fatalf("scope %q key %q: id %q (err %v) equals alice's", other[0], other[1], c[0].ID, err)
		}
	}
	for _, bad := range []string{"", "a b", "é", "x\x00", strings.Repeat("k", 201)} {
		err := FillIDs(msgs(), "s", bad)
		if fe, ok := AsFieldError(err); !ok || fe.Field != "Idempotency-Key" {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}

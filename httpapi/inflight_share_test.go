package httpapi

import (
	"strings"
	"testing"

	"github.com/remstore/remstore/internal/dbtest"
)

// One caller holds three quarters of MaxInFlight at most, so a quarter is
// always another's: bob's 16 slow audit pages held every slot of
// --max-in-flight 16 and alice's stores met 429 91 times of 92. Here
// (MaxInFlight 4): bob (the unbound key) holding 3, his next request is
// refused naming his share, alice's (her own key) is served; a 4th holder
// fills the server and she is refused too, naming the total.
func TestInFlightShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ max, share int }{{1, 1}, {2, 2}, {3, 3}, {4, 3}, {16, 12}, {64, 48}} {
		if got := inflightShare(tc.max); got != tc.share {
			t.Errorf("inflightShare(%d) = %d, want %d", tc.max, got, tc.share)
		}
	}
	api := newAPI(t, dbtest.NewSQLite(t), Options{MaxInFlight: 4})
	for range 3 {
		if !api.inflight.take("key 0") {
			t.Fatal("bob's slot refused")
		}
	}
	code, body, hdr := do(t, api, call{method: "GET", path: "/v1/sessions", user: "bob"})
	if code != 429 || hdr.Get("Retry-After") == "" || !strings.Contains(body, "your requests hold 3 of the 4") {
		t.Fatalf("bob's 4th: %d %s", code, body)
	}
	if code, body, _ := do(t, api, call{method: "GET", path: "/v1/sessions", auth: "alice-only-0123456789"}); code != 200 {
		t.Fatalf("alice beside bob's 3: %d %s", code, body)
	}
	api.inflight.take("user carol")
	code, body, _ = do(t, api, call{method: "GET", path: "/v1/sessions", auth: "alice-only-0123456789"})
	if code != 429 || !strings.Contains(body, "more than 4 requests in flight") {
		t.Fatalf("alice on a full server: %d %s", code, body)
	}
}

package signin

import (
	"fmt"
	"testing"
	"time"
)

func TestNetwork(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:4000":                   "192.0.2.1",
		"192.0.2.1":                        "192.0.2.1",
		"[2001:db8:1:2:aaaa::1]:4000":      "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff:ffff:ffff:ffff": "2001:db8:1:2::/64",
		"[2001:db8:1:3::1]:1":              "2001:db8:1:3::/64",
		"[::ffff:192.0.2.1]:80":            "192.0.2.1",
		"not an address":                   "not an address",
	} {
		if got := Network(in); got != want {
			t.Errorf("Network(%q) = %q, want %q", in, got, want)
		}
	}
}

// Guessing from one IPv6 /64 is one client however many addresses it
// uses; one client's failures never refuse another; past the global budget
// each client gets one failure a window; the window's end lets all in.
func TestLimiter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	l := New(func() time.Time { return now })
	for i := range Failures {
		l.Fail(fmt.Sprintf("[2001:db8::%x]:5000", i+1))
	}
	if l.Wait("[2001:db8::ffff]:1") == 0 {
		t.Error("a new address of the same /64 is not refused")
	}
	if l.Wait("[2001:db8:0:1::1]:1") != 0 || l.Wait("192.0.2.1:1") != 0 {
		t.Error("another network is refused")
	}
	// Spread over many addresses, GlobalBudget failures spend the budget.
	for i := range GlobalBudget {
		l.Fail(fmt.Sprintf("198.51.%d.%d:1", i/250, i%250))
	}
	l.Fail("203.0.113.7:1")
	if l.Wait("203.0.113.7:1") == 0 {
		t.Error("past the global budget, one failure does not refuse its client")
	}
	if l.Wait("203.0.113.8:1") != 0 {
		t.Error("past the global budget, a client without failures is refused")
	}
	now = now.Add(Window + time.Second)
	if l.Wait("[2001:db8::ffff]:1") != 0 || l.Wait("203.0.113.7:1") != 0 {
		t.Error("refused after the window")
	}
}

var networkCases = []string{"192.0.2.1:1234", "192.0.2.1", "[::1]:80", "::1", "2001:db8::1", "[2001:db8:1:2:3:4:5:6]:9",
	"::ffff:192.0.2.1", "[::ffff:192.0.2.1]:5", "fe80::1%eth0", "[fe80::1%eth0]:5", "host:80", "host", "", ":80", "1.2.3.4:",
	"01.2.3.4", "[1.2.3.4]:5", "1.2.3.4:99999", "::", "[::]:0"}

func TestNetworkIsNet(t *testing.T) {
	for _, c := range networkCases {
		if got, want := Network(c), networkByNet(c); got != want {
			t.Errorf("Network(%q) = %q, want %q", c, got, want)
		}
	}
}

func FuzzNetwork(f *testing.F) {
	for _, c := range networkCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, c string) {
		if got, want := Network(c), networkByNet(c); got != want {
			t.Fatalf("Network(%q) = %q, want %q", c, got, want)
		}
	})
}

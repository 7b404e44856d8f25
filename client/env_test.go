package client

import (
	"os"
	"regexp"
	"testing"

	"github.com/remstore/remstore/settings"
)

func TestFromEnv(t *testing.T) {
	t.Setenv(settings.KeyURL, "")
	t.Setenv(settings.KeyAPIKey, "k-from-env")
	t.Setenv(settings.KeyUserID, "alice")
	c, err := FromEnv(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "http://127.0.0.1:8088" || c.o.APIKey != "k-from-env" || c.o.UserID != "alice" {
		t.Errorf("defaults: %s %q %q", c.BaseURL(), c.o.APIKey, c.o.UserID)
	}
	t.Setenv(settings.KeyURL, "http://127.0.0.1:41234/")
	c, err = FromEnv(Options{APIKey: "explicit", UserID: "bob"})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "http://127.0.0.1:41234" || c.o.APIKey != "explicit" || c.o.UserID != "bob" {
		t.Errorf("REMSTORE_URL and explicit options: %s %q %q", c.BaseURL(), c.o.APIKey, c.o.UserID)
	}
	t.Setenv(settings.KeyURL, "127.0.0.1:8088")
	if _, err := FromEnv(Options{}); err == nil {
		t.Error("a URL without scheme is accepted")
	}
}

// The Python client's default URL is serve's default address too: one
// default, written in Go, checked in the Python source.
func TestPythonDefaultURLAgrees(t *testing.T) {
	b, err := os.ReadFile("../python/src/remstore/_calls.py")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^DEFAULT_URL = "([^"]+)"`).FindSubmatch(b)
	if m == nil || string(m[1]) != settings.LocalURL(settings.DefaultAddr) {
		t.Fatalf("python DEFAULT_URL %q, Go's default %q", m, settings.LocalURL(settings.DefaultAddr))
	}
}

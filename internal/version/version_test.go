package version

import (
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name, linked, commit string
		info                 *debug.BuildInfo
		want                 string
	}{
		{"release build", "v0.3.1", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0.3.1"},
		{"go install @tag", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.0"}}, "0.2.0"},
		{"go install @commit", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.2.1-0.20261126020000-abcdefabcdef"}}, "0.2.1-0.20261126020000-abcdefabcdef"},
		{"checkout, clean", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "false")}, Release + "-devel+0123456789ab"},
		{"checkout, edited", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("0123456789abcdef0123", "true")}, Release + "-devel+0123456789ab.dirty"},
		{"no vcs stamp", "", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Release + "-devel"},
		// Go 1.24 and later stamp a checkout with a pseudo-version too.
		{"checkout, Go 1.24+", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126122336-204cfe61573f"}, Settings: vcs("204cfe61573fb0b1c2d3", "false")}, Release + "-devel+204cfe61573f"},
		{"checkout, Go 1.24+, edited", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126122336-204cfe61573f+dirty"}, Settings: vcs("204cfe61573fb0b1c2d3", "true")}, Release + "-devel+204cfe61573f.dirty"},
		{"no build info", "", "", nil, Release + "-devel"},
		// A checkout built by the Makefile or scripts/*.sh: the commit
		// linked in stands where Go recorded nothing.
		{"-buildvcs=false, linked commit", "", "0123456789ab", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Release + "-devel+0123456789ab"},
		{"-buildvcs=false, linked commit, edited", "", "0123456789ab.dirty", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Release + "-devel+0123456789ab.dirty"},
		{"stamp and linked commit", "", "0123456789ab", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261126122336-0123456789ab"}, Settings: vcs("0123456789abcdef0123", "false")}, Release + "-devel+0123456789ab"},
		{"release build wins over a commit", "0.3.1", "0123456789ab", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "0.3.1"},
	} {
		if got := describe(c.linked, c.commit, c.info); got != c.want {
			t.Errorf("%s: describe = %q, want %q", c.name, got, c.want)
		}
	}
}

// The release being prepared is said three times for three audiences: the
// changelog's first heading, the Go constant, the Python package. They agree.
func TestReleaseAgrees(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, c := range []struct {
		path string
		re   *regexp.Regexp
	}{
		{"../../CHANGELOG.md", regexp.MustCompile(`(?m)^## \[?([0-9][^\] ]*)`)},
		{"../../python/pyproject.toml", regexp.MustCompile(`(?m)^version = "([^"]+)"`)},
		{"../../python/src/remstore/__init__.py", regexp.MustCompile(`(?m)^__version__ = "([^"]+)"`)},
	} {
		m := c.re.FindStringSubmatch(read(c.path))
		if m == nil {
			t.Errorf("%s: no version found", c.path)
			continue
		}
		if m[1] != Release {
			t.Errorf("%s says %s, internal/version.Release says %s", c.path, m[1], Release)
		}
	}
}

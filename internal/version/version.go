package version

import (
	"runtime/debug"
	"strings"
)

// Release is the release being prepared: the first heading of CHANGELOG.md
// and the Python package's version say the same (TestReleaseAgrees).
const Release = "0.2.0"

// set is filled by release builds:
// -ldflags "-X github.com/remstore/remstore/internal/version.set=0.2.0".
var set string

// String is the version a user should quote in a bug report.
func String() string {
	info, _ := debug.ReadBuildInfo()
	return describe(set, info)
}

// describe decides the version from what the linker and the Go toolchain
// recorded, in that order of trust; it is pure so the cases can be tested.
func describe(linked string, info *debug.BuildInfo) string {
	if linked != "" {
		return strings.TrimPrefix(linked, "v")
	}
	if info == nil {
		return Release + "-devel"
	}
	// `go install github.com/remstore/remstore/cmd/remstore@v0.2.0` records
	// the module version; a checkout records "(devel)" and the VCS stamp.
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return strings.TrimPrefix(v, "v")
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	out := Release + "-devel"
	if rev != "" {
		out += "+" + rev[:min(12, len(rev))]
		if modified == "true" {
			out += ".dirty"
		}
	}
	return out
}

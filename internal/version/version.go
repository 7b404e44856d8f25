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

// commit is filled by the builds this repository makes from a checkout
// (Makefile, scripts/*.sh, through scripts/ldflags.sh):
// -ldflags "-X github.com/remstore/remstore/internal/version.commit=0123456789ab.dirty".
// It stands in for Go's own VCS stamp, which is missing under
// GOFLAGS=-buildvcs=false, in `go run` and in `go test`.
var commit string

// String is the version a user should quote in a bug report.
func String() string {
	info, _ := debug.ReadBuildInfo()
	return describe(set, commit, info)
}

// describe decides the version from what the linker and the Go toolchain
// recorded, in that order of trust; it is pure so the cases can be tested.
func describe(linked, linkedCommit string, info *debug.BuildInfo) string {
	if linked != "" {
		return strings.TrimPrefix(linked, "v")
	}
	if info == nil {
		return devel(linkedCommit)
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
	// `go install github.com/remstore/remstore/cmd/remstore@v0.2.0` records
	// the module version, from the module cache and without a VCS stamp. A
	// checkout records the VCS stamp, and "(devel)" as its version before
	// Go 1.24, a pseudo-version of the commit since (it printed
	// 0.0.0-20261126122336-204cfe61573f where the docs promise
	// 0.2.0-devel+<commit>): with a stamp, the stamp says.
	if v := info.Main.Version; v != "" && v != "(devel)" && rev == "" && linkedCommit == "" {
		return strings.TrimPrefix(v, "v")
	}
	if rev == "" {
		// No VCS stamp (-buildvcs=false, go run, go test): the commit
		// the build script linked in, if any.
		return devel(linkedCommit)
	}
	rev = rev[:min(12, len(rev))]
	if modified == "true" {
		rev += ".dirty"
	}
	return devel(rev)
}

// devel is the version of a build from a checkout: the release being
// prepared, and the commit when one is known.
func devel(commit string) string {
	if commit == "" {
		return Release + "-devel"
	}
	return Release + "-devel+" + commit
}

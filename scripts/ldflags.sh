#!/usr/bin/env bash
# Prints the -ldflags value that tells a build from this checkout which commit
# it is (internal/version), so `remstore --version` says
# <release>-devel+<commit>[.dirty] whatever GOFLAGS says: Go's own VCS stamp
# is missing under GOFLAGS=-buildvcs=false and in `go run`. ".dirty" as Go
# decides it: `git status --porcelain` prints anything. Prints nothing
# outside a git checkout (the version is then <release>-devel).
#
#   go build -ldflags "$(scripts/ldflags.sh)" -o bin/remstore ./cmd/remstore
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse HEAD 2>/dev/null) || exit 0
rev=${rev:0:12}
[ -z "$(git status --porcelain 2>/dev/null)" ] || rev+=.dirty
echo "-X github.com/remstore/remstore/internal/version.commit=$rev"

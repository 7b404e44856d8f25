#!/usr/bin/env bash
# Runs every fuzz target for $1 (default 30s) each. A crasher is written to the
# package's testdata/fuzz/<Target>/ by go test; commit it: it becomes a
# regression test that every `go test` run replays.
set -euo pipefail
cd "$(dirname "$0")/.."
t=${1:-30s}
for pkg in ./models ./compressor ./convert ./sdk; do
  for target in $(go test -list 'Fuzz.*' "$pkg" | grep '^Fuzz'); do
    echo "== $pkg $target ($t)"
    go test -run XXX -fuzz "^${target}\$" -fuzztime "$t" "$pkg"
  done
done

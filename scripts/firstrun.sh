#!/usr/bin/env bash
# What a new user's first `go run ./cmd/remstore demo` costs: runs it on an
# empty module cache and an empty build cache (both in a temporary folder,
# removed afterwards; the module proxy is the one `go env GOPROXY` names) and
# prints the wall time, how many module zips were downloaded, which, and the
# size of both caches, then runs the next step the demo prints (it must be a
# `go run ./cmd/remstore ...` command, what works where the user stands).
# The README quotes its line. The demo writes to a
# temporary data folder, not to your ~/.local/share/remstore.
#
#   scripts/firstrun.sh            # one line: date, seconds, zips, MB, load
#   FIRSTRUN_LIST=1 scripts/firstrun.sh   # also the modules zipped
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export GOMODCACHE=$tmp/mod GOCACHE=$tmp/build XDG_DATA_HOME=$tmp/data
# -modcacherw only so the trap can delete the cache; it changes no download.
export GOFLAGS="${GOFLAGS:-} -modcacherw"
load_before=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
start=$(date +%s.%N)
go run ./cmd/remstore demo >"$tmp/demo.out" 2>&1 || { cat "$tmp/demo.out" >&2; exit 1; }
end=$(date +%s.%N)
load_after=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
grep -q 'equal to the stored text: true' "$tmp/demo.out" || { cat "$tmp/demo.out" >&2; exit 1; }
# The demo's next step is a command that works from here: run it as printed.
next=$(grep -A1 '^next, from this shell:' "$tmp/demo.out" | tail -1 | sed 's/   #.*//')
case $next in
  "  go run ./cmd/remstore load "*)
    next_start=$(date +%s.%N)
    eval "$next" >/dev/null 2>"$tmp/next.err" || { cat "$tmp/next.err" >&2; echo "firstrun: the next step failed: $next" >&2; exit 1; }
    next_secs=$(awk -v a="$next_start" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}') ;;
  *) echo "firstrun: the demo's next step is not a go run command: '$next'" >&2; exit 1 ;;
esac
zips=$(find "$GOMODCACHE/cache/download" -name '*.zip' | sort)
n=$(grep -c . <<<"$zips" || true)
mod_mb=$(du -sm "$GOMODCACHE" | cut -f1)
build_mb=$(du -sm "$GOCACHE" | cut -f1)
secs=$(awk -v a="$start" -v b="$end" 'BEGIN{printf "%.1f", b-a}')
if [ -n "${FIRSTRUN_LIST:-}" ]; then
  sed -e "s|^$GOMODCACHE/cache/download/||" -e 's|/@v/| |' -e 's|\.zip$||' <<<"$zips"
fi
echo "firstrun: $(date -u +%F) $(go env GOVERSION) GOPROXY=$(go env GOPROXY): ${secs} s," \
  "$n module zips, ${mod_mb} MB module cache, ${build_mb} MB build cache; the next step ${next_secs} s" \
  "($(nproc) cores, load ${load_before} before, ${load_after} after)"

#!/usr/bin/env bash
# Repository hygiene, run by .ci/run: no tracked build output. Fails when a
# tracked file is an executable binary (ELF, Mach-O, PE, or any file with a NUL
# byte and the executable bit) or is larger than 1 MB, unless it is listed in
# ALLOW below with the reason it belongs in git.
set -euo pipefail
cd "$(dirname "$0")/.."
ALLOW=(
  # path            # why it is tracked
)
allowed() { local f; for f in "${ALLOW[@]}"; do [ "$f" = "$1" ] && return 0; done; return 1; }
bad=0
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  allowed "$f" && continue
  size=$(wc -c <"$f")
  if [ "$size" -gt 1048576 ]; then
    echo "hygiene: $f is $size bytes (over 1 MB)" >&2; bad=1
  fi
  magic=$(head -c 4 "$f" | od -An -tx1 | tr -d ' \n')
  case "$magic" in
    7f454c46|cffaedfe|cefaedfe|feedfacf|feedface|4d5a*) echo "hygiene: $f is an executable binary" >&2; bad=1; continue ;;
  esac
  if [ -x "$f" ] && head -c 8000 "$f" | tr -d '\000' | cmp -s - <(head -c 8000 "$f"); then :; elif [ -x "$f" ]; then
    echo "hygiene: $f is executable and binary" >&2; bad=1
  fi
done < <(git ls-files -z)
[ $bad = 0 ] && echo "hygiene: $(git ls-files | wc -l) tracked files, no binary, none over 1 MB"
exit $bad

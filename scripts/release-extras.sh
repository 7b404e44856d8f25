#!/usr/bin/env bash
# What a release carries besides the binaries, made before GoReleaser packs
# them (its before hook, .goreleaser.yaml) into .release/:
#   - the Python client as a wheel, remstore-<python version>-py3-none-any.whl,
#     built from python/ in a throwaway venv (pip fetches setuptools);
#   - README.md for the archives: docs/release-archive.md with the version
#     and the wheel's file name filled in.
#
#   scripts/release-extras.sh 0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release-extras.sh VERSION}
out=.release
rm -rf "$out" && mkdir -p "$out"
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" wheel -q --no-deps --disable-pip-version-check -w "$out" ./python
wheels=("$out"/remstore-*-py3-none-any.whl)
[ ${#wheels[@]} = 1 ] && [ -f "${wheels[0]}" ] || { echo "release-extras: no single wheel in $out" >&2; exit 1; }
wheel=$(basename "${wheels[0]}")
sed -e "s/remstore-<version>-py3-none-any\.whl/$wheel/g" -e "s/<version>/$version/g" \
  docs/release-archive.md >"$out/README.md"
echo "release-extras: $out/$wheel, $out/README.md for $version" >&2

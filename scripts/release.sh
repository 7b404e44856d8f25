#!/usr/bin/env bash
# The release configuration, checked as CI can without publishing: installs
# GoReleaser (into .test-output/tools), runs `goreleaser check`, then a
# snapshot release of every target (linux and darwin on amd64 and arm64) into
# dist/, and verifies what came out: each archive is there and matches
# checksums.txt, holds exactly the binary, LICENSE, CHANGELOG.md and the
# README.md written for it (docs/release-archive.md, naming nothing the
# archive lacks), each binary is static (CGO_ENABLED=0) for its platform,
# the linux/amd64 one reports the snapshot's version and runs the README's
# first command (remstore demo) from the unpacked archive; the Python client's
# wheel has its checksum line and, installed into a fresh venv away from the
# checkout, imports and stores and loads through the snapshot's serve. A real release is
# `goreleaser release` on a tag vX.Y.Z (docs/install.md).
set -euo pipefail
cd "$(dirname "$0")/.."
# v2.18 needs Go 1.27; v2.15.1 is the newest that builds with go.mod's Go.
GORELEASER_VERSION=v2.15.1
tools=$PWD/.test-output/tools
mkdir -p "$tools"
if ! "$tools/goreleaser" --version 2>/dev/null | grep -q "${GORELEASER_VERSION#v}"; then
  echo "release: installing GoReleaser $GORELEASER_VERSION" >&2
  GOBIN=$tools GOFLAGS= go install "github.com/goreleaser/goreleaser/v2@$GORELEASER_VERSION"
fi
gr=$tools/goreleaser

# check_archive_readme ARCHIVE VERSION: the README.md inside is the one
# written for the archive, for this version, and every relative link in it
# names a file the archive holds (the repository's README names docs/,
# fixtures/ and ./cmd/, none of them inside).
check_archive_readme() {
  local readme
  readme=$(tar -xzOf "$1" README.md)
  [ "$(head -1 <<<"$readme")" = "# remstore $2" ] || { echo "release: $1's README.md is not the archive's (docs/release-archive.md) for $2" >&2; exit 1; }
  grep -q '^remstore demo ' <<<"$readme" || { echo "release: $1's README.md gives no first command" >&2; exit 1; }
  if grep -n '<version>\|go run \|\./cmd/\|fixtures/' <<<"$readme" >&2; then
    echo "release: $1's README.md names something a binary's user does not have (above)" >&2; exit 1
  fi
  local link
  for link in $(grep -o '](\([^)]*\))' <<<"$readme" | sed 's/^](\(.*\))$/\1/' | grep -v '^https\?://'); do
    tar -tzf "$1" | grep -qx "${link%%#*}" || { echo "release: $1's README.md links to $link, not in the archive" >&2; exit 1; }
  done
}

# check_wheel WHEEL BINARY: installs the wheel into a fresh venv (httpx from
# PyPI) and, from a folder outside the checkout, imports the client from
# the venv and stores and loads a message through BINARY's serve.
check_wheel() {
  local tmp wheel bin pid
  tmp=$(mktemp -d) wheel=$(realpath "$1") bin=$(realpath "$2")
  python3 -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install -q --disable-pip-version-check "$wheel" || { rm -rf "$tmp"; echo "release: pip install $(basename "$wheel") failed" >&2; exit 1; }
  REMSTORE_API_KEYS=release-check-key-0123456789 "$bin" serve --db "$tmp/r.db" --addr 127.0.0.1:0 --url-file "$tmp/url" 2>"$tmp/serve.log" &
  pid=$!
  for _ in $(seq 100); do [ -s "$tmp/url" ] && break; sleep 0.1; done
  local rc=0
  (cd "$tmp" && REMSTORE_URL=$(cat url) REMSTORE_API_KEY=release-check-key-0123456789 REMSTORE_USER_ID=alice \
    venv/bin/python - "$tmp/venv" <<'PY') || rc=$?
import os, sys
import remstore
assert remstore.__file__.startswith(sys.argv[1]), remstore.__file__
with remstore.Client() as c:
    c.store("wheel-check", [{"role": "user", "content": "hello"}])
    assert c.load("wheel-check")[0]["content"] == "hello"
print("release: wheel", remstore.__version__, "imported from", os.path.dirname(remstore.__file__), file=sys.stderr)
PY
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
  [ "$rc" = 0 ] || { cat "$tmp/serve.log" >&2; rm -rf "$tmp"; echo "release: the installed wheel did not work" >&2; exit 1; }
  rm -rf "$tmp"
}
# The snapshot is named after the release being prepared.
REMSTORE_RELEASE=$(sed -n 's/^const Release = "\(.*\)"$/\1/p' internal/version/version.go)
export REMSTORE_RELEASE
"$gr" check
"$gr" release --snapshot --clean >.test-output/goreleaser.log 2>&1 || { tail -40 .test-output/goreleaser.log >&2; exit 1; }
version=$(python3 -c 'import json; print(json.load(open("dist/metadata.json"))["version"])')
# The wheel is not copied into dist/: its line is checked where it was built.
(cd dist && sha256sum --quiet --ignore-missing -c checksums.txt)
wheel=$(ls .release/remstore-*-py3-none-any.whl)
grep -q " $(basename "$wheel")\$" dist/checksums.txt || { echo "release: checksums.txt has no line for $(basename "$wheel")" >&2; exit 1; }
(cd .release && grep " $(basename "$wheel")\$" ../dist/checksums.txt | sha256sum --quiet -c)
[ "$(grep -c . dist/checksums.txt)" = 5 ] || { echo "release: checksums.txt should list 4 archives and the wheel:" >&2; cat dist/checksums.txt >&2; exit 1; }
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  os=${target%_*} arch=${target#*_}
  archive="dist/remstore_${version}_${target}.tar.gz"
  [ -f "$archive" ] || { echo "release: $archive is missing" >&2; exit 1; }
  files=$(tar -tzf "$archive" | sort)
  [ "$files" = "$(printf '%s\n' CHANGELOG.md LICENSE README.md remstore)" ] || {
    echo "release: $archive holds" $files "(want CHANGELOG.md LICENSE README.md remstore)" >&2; exit 1; }
  check_archive_readme "$archive" "$version"
  bin=$(ls -d dist/remstore_"${target}"*/remstore)
  info=$(go version -m "$bin")
  # (-trimpath keeps -ldflags out of the build info: the version is checked
  # by running the one binary this machine can run, below.)
  for want in "GOOS=$os" "GOARCH=$arch" "CGO_ENABLED=0"; do
    grep -qF -- "$want" <<<"$info" || { echo "release: $bin was not built with $want" >&2; exit 1; }
  done
done
check_wheel "$wheel" dist/remstore_linux_amd64_v1/remstore
# The archive README's first command, run from the unpacked archive as it
# says (the binary on PATH): it prints what the README promises and next
# steps naming plain `remstore`.
unpacked=$(mktemp -d)
tar -C "$unpacked" -xzf "dist/remstore_${version}_linux_amd64.tar.gz"
demo=$(cd "$unpacked" && PATH=$unpacked:$PATH XDG_DATA_HOME=$unpacked/data remstore demo 2>&1) || { echo "$demo" >&2; exit 1; }
rm -rf "$unpacked"
grep -q 'equal to the stored text: true' <<<"$demo" && grep -q '^  remstore load ' <<<"$demo" ||
  { echo "$demo" >&2; echo "release: the archive's remstore demo did not print what its README says" >&2; exit 1; }
got=$(dist/remstore_linux_amd64_v1/remstore --version)
[ "$got" = "remstore version $version" ] || { echo "release: the binary says '$got', the snapshot is $version" >&2; exit 1; }
echo "release: goreleaser check ok; snapshot $version: 4 archives (contents and README checked), checksums verified, static binaries; $(basename "$wheel") installed in a fresh venv and used"

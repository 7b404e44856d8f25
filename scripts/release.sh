#!/usr/bin/env bash
# The release configuration, checked as CI can without publishing: installs
# GoReleaser (into .test-output/tools), runs `goreleaser check`, then a
# snapshot release of every target (linux and darwin on amd64 and arm64) into
# dist/, and verifies what came out: each archive is there and matches
# checksums.txt, each binary is static (CGO_ENABLED=0) for its platform, and
# the linux/amd64 one reports the snapshot's version. A real release is
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
# The snapshot is named after the release being prepared.
REMSTORE_RELEASE=$(sed -n 's/^const Release = "\(.*\)"$/\1/p' internal/version/version.go)
export REMSTORE_RELEASE
"$gr" check
"$gr" release --snapshot --clean >.test-output/goreleaser.log 2>&1 || { tail -40 .test-output/goreleaser.log >&2; exit 1; }
version=$(python3 -c 'import json; print(json.load(open("dist/metadata.json"))["version"])')
(cd dist && sha256sum --quiet -c checksums.txt)
for target in linux_amd64 linux_arm64 darwin_amd64 darwin_arm64; do
  os=${target%_*} arch=${target#*_}
  archive="dist/remstore_${version}_${target}.tar.gz"
  [ -f "$archive" ] || { echo "release: $archive is missing" >&2; exit 1; }
  files=$(tar -tzf "$archive")
  for f in remstore LICENSE README.md CHANGELOG.md; do
    grep -qx "$f" <<<"$files" || { echo "release: $archive has no $f" >&2; exit 1; }
  done
  bin=$(ls -d dist/remstore_"${target}"*/remstore)
  info=$(go version -m "$bin")
  # (-trimpath keeps -ldflags out of the build info: the version is checked
  # by running the one binary this machine can run, below.)
  for want in "GOOS=$os" "GOARCH=$arch" "CGO_ENABLED=0"; do
    grep -qF -- "$want" <<<"$info" || { echo "release: $bin was not built with $want" >&2; exit 1; }
  done
done
got=$(dist/remstore_linux_amd64_v1/remstore --version)
[ "$got" = "remstore version $version" ] || { echo "release: the binary says '$got', the snapshot is $version" >&2; exit 1; }
echo "release: goreleaser check ok; snapshot $version: 4 archives, checksums verified, static binaries"

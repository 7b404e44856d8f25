#!/usr/bin/env bash
# Builds the container image localhost/remstore:latest into your local image
# store, where `podman run localhost/remstore` (and docker's) finds it.
#
#   scripts/image.sh            build it with podman (and docker, where a docker
#                               daemon answers) and check it
#   REMSTORE_IMAGE_PG_SOCK=dir  then run docs/install.md's container commands as
#                               written against the PostgreSQL whose unix socket
#                               is in dir (scripts/image-docs.sh; make test sets it)
#
# The binary is dist/'s linux/amd64 one when scripts/release.sh made it, else a
# static build of the checkout. podman (Debian's; installed as root when
# missing) builds in its default store for the user running it, in docker
# format so the image keeps its HEALTHCHECK (the OCI format drops it). docker,
# where `docker info` reaches a daemon (and `docker` is not podman itself),
# gets the same build in its own store. Checked: the user is 65532 (not root),
# the entrypoint is the binary, the health check is `remstore health`.
set -euo pipefail
cd "$(dirname "$0")/.."
tag=localhost/remstore:latest
if ! command -v podman >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "image: installing Debian's podman" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null) || true
  fi
  command -v podman >/dev/null 2>&1 || { echo "image: podman is not installed (Debian: apt-get install podman)" >&2; exit 1; }
fi
ctx=$(mktemp -d /tmp/remstore-image.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/data"
if [ -x dist/remstore_linux_amd64_v1/remstore ]; then
  cp dist/remstore_linux_amd64_v1/remstore "$ctx/remstore"
else
  CGO_ENABLED=0 go build -trimpath -ldflags "$(scripts/ldflags.sh)" -o "$ctx/remstore" ./cmd/remstore
fi
cp /etc/ssl/certs/ca-certificates.crt "$ctx/" 2>/dev/null || : >"$ctx/ca-certificates.crt"
cp Dockerfile "$ctx/"

want='65532:65532|["/usr/local/bin/remstore"]|["serve"]|["CMD","/usr/local/bin/remstore","health"]'
format='{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{json .Config.Healthcheck.Test}}'
# No RUN step, so chroot isolation needs no cgroup or namespace setup.
podman build --isolation chroot --format docker -q -t "$tag" "$ctx" >/dev/null
config=$(podman image inspect --format "$format" "$tag")
[ "$config" = "$want" ] || { echo "image: podman: config is $config, want $want" >&2; exit 1; }
podman image exists "$tag" || { echo "image: podman does not list $tag after the build" >&2; exit 1; }
echo "image: $tag in podman's store ($(podman info --format '{{.Store.GraphRoot}}')): user 65532, entrypoint remstore, health check remstore health"

if ! command -v docker >/dev/null 2>&1; then
  echo "image: no docker here; podman only"
elif docker --version 2>/dev/null | grep -qi podman; then
  echo "image: docker is podman here; nothing more to build"
elif ! docker info >/dev/null 2>&1; then
  echo "image: docker answers no daemon here (docker info fails); podman only"
else
  docker build -q -t "$tag" "$ctx" >/dev/null
  config=$(docker image inspect --format "$format" "$tag")
  [ "$config" = "$want" ] || { echo "image: docker: config is $config, want $want" >&2; exit 1; }
  echo "image: $tag in docker's store too"
fi

[ -n "${REMSTORE_IMAGE_PG_SOCK:-}" ] || exit 0
scripts/image-docs.sh

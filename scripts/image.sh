#!/usr/bin/env bash
# Builds the container image (Dockerfile) without a daemon and checks it.
#
#   scripts/image.sh            build localhost/remstore:latest and check it
#   REMSTORE_IMAGE_PG_SOCK=dir  also run it: serve against the PostgreSQL whose
#                               unix socket is in dir (make test sets it)
#
# The binary is dist/'s linux/amd64 one when scripts/release.sh made it, else a
# static build of the checkout. podman (Debian's; installed as root when
# missing) builds the image with chroot isolation and vfs storage, so no
# daemon, overlay or cgroup setup is needed; docker works the same way with
# `docker build -t localhost/remstore .` in the context this script prepares.
# Checked: the user is 65532 (not root), the entrypoint is the binary, the
# health check is `remstore health`; the image is saved as an OCI archive
# (.test-output/remstore-image.oci.tar). Run (where podman can start
# containers): serve in the container stores and loads a message over HTTP on
# PostgreSQL, and the image's own health check reports healthy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$PWD/.test-output
mkdir -p "$out"
if ! command -v podman >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "image: installing Debian's podman" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman >/dev/null) || true
  fi
  command -v podman >/dev/null 2>&1 || { echo "image: podman is not installed" >&2; exit 1; }
fi
work=$(mktemp -d /tmp/remstore-image.XXXXXX)
pm() { podman --root "$work/storage" --runroot "$work/run" --storage-driver vfs --cgroup-manager cgroupfs "$@"; }
cleanup() { pm rm -af >/dev/null 2>&1 || true; rm -rf "$work" 2>/dev/null || true; }
trap cleanup EXIT

ctx=$work/context
mkdir -p "$ctx/data"
if [ -x dist/remstore_linux_amd64_v1/remstore ]; then
  cp dist/remstore_linux_amd64_v1/remstore "$ctx/remstore"
else
  CGO_ENABLED=0 go build -trimpath -o "$ctx/remstore" ./cmd/remstore
fi
cp /etc/ssl/certs/ca-certificates.crt "$ctx/" 2>/dev/null || : >"$ctx/ca-certificates.crt"
cp Dockerfile "$ctx/"
pm build --isolation chroot --format docker -q -t localhost/remstore:latest "$ctx" >/dev/null

config=$(pm image inspect --format '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.Cmd}}|{{json .Config.Healthcheck.Test}}' localhost/remstore:latest)
want='65532:65532|["/usr/local/bin/remstore"]|["serve"]|["CMD","/usr/local/bin/remstore","health"]'
[ "$config" = "$want" ] || { echo "image: config is $config, want $want" >&2; exit 1; }
rm -f "$out/remstore-image.oci.tar"
pm save -q --format oci-archive -o "$out/remstore-image.oci.tar" localhost/remstore:latest >/dev/null
echo "image: localhost/remstore:latest: user 65532, entrypoint remstore, health check remstore health; $(du -h "$out/remstore-image.oci.tar" | cut -f1) OCI archive"

[ -n "${REMSTORE_IMAGE_PG_SOCK:-}" ] || exit 0

# Run it. On a host with cgroup v1 and v2 mounted side by side (hybrid), crun
# refuses to start; a private mount namespace that shows only cgroup v2 is
# enough, as containers here run without resource limits (--cgroups=disabled).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key=image-key-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
psql_url="postgres://postgres@/postgres?host=$REMSTORE_IMAGE_PG_SOCK&sslmode=disable"
PGOPTIONS='-c client_min_messages=warning' psql -q "$psql_url" -c 'DROP DATABASE IF EXISTS remstore_image' -c 'CREATE DATABASE remstore_image' >/dev/null
export -f pm
export work port key
run=$(cat <<'SH'
set -euo pipefail
if [ -d /sys/fs/cgroup/unified ]; then umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup; fi
# --health-interval=disable: no systemd timer here; the check runs below.
pm run -d --name remstore-ci --network host --cgroups=disabled --health-interval=disable \
  --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
  -v "$REMSTORE_IMAGE_PG_SOCK:/run/postgresql" \
  -e REMSTORE_DB='postgres://postgres@/remstore_image?host=/run/postgresql&sslmode=disable' \
  -e REMSTORE_ADDR="127.0.0.1:$port" -e REMSTORE_API_KEYS="$key" \
  localhost/remstore:latest >/dev/null 2>>"$work/podman.log" || { cat "$work/podman.log" >&2; exit 1; }
url=http://127.0.0.1:$port
for _ in $(seq 100); do curl -sf "$url/healthz" >/dev/null && break; sleep 0.1; done
curl -sf "$url/healthz" >/dev/null || { pm logs remstore-ci >&2; exit 1; }
H=(-H "Authorization: Bearer $key" -H "X-User-Id: alice")
curl -sf "${H[@]}" -X POST "$url/v1/sessions/image/messages" -d '[{"role":"user","content":"from the image"}]' | grep -q '"stored":1'
curl -sf "${H[@]}" "$url/v1/sessions/image/messages" | grep -q '"from the image"'
health=$(pm healthcheck run remstore-ci) || { echo "image: the health check failed: $health" >&2; exit 1; }
pid=$(pm inspect --format '{{.State.Pid}}' remstore-ci)
user=$(stat -c %u "/proc/$pid")
[ "$user" = 65532 ] || { echo "image: serve runs as uid $user" >&2; exit 1; }
pm stop -t 10 remstore-ci >/dev/null 2>>"$work/podman.log"
echo "image: ran serve on PostgreSQL as uid $user: stored and loaded over HTTP; health check ${health:-healthy}"
SH
)
unshare -m bash -c "$run"

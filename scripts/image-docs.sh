#!/usr/bin/env bash
# Runs docs/install.md's container commands as written (the sh blocks marked
# `<!-- run by scripts/image-docs.sh -->`), each block in one bash, and checks
# that its output holds what its "# → ..." comments say; then checks
# compose.yaml with podman-compose (Debian's; installed as root when missing).
#
#   REMSTORE_IMAGE_PG_SOCK=dir scripts/image-docs.sh
#
# The commands run in a private mount and network namespace with a podman
# store and configuration of their own, so port 8088 and the container name
# `remstore` cannot clash with anything else on the machine and nothing is
# left behind. The configuration (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF)
# holds only what this host needs and a user's machine does not:
# - vfs storage in a temp dir (no overlay setup);
# - no cgroups (this host mounts cgroup v1 and v2 side by side, which crun
#   refuses; the namespace shows cgroup v2 only) and explicit nofile/nproc
#   limits (crun may not raise them here);
# - the test PostgreSQL's socket dir mounted at /run/postgresql in every
#   container, with REMSTORE_DB naming it, as a user sets REMSTORE_DB to their
#   own server's URL.
# There is no systemd here, so podman's timer for the periodic health check
# cannot be set up (podman logs that); the docs' `podman healthcheck run`
# runs the same check once.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REMSTORE_IMAGE_PG_SOCK:?set REMSTORE_IMAGE_PG_SOCK to the test PostgreSQL socket dir}"
if ! command -v podman-compose >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "image: installing Debian's podman-compose" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman-compose >/dev/null) || true
  fi
  command -v podman-compose >/dev/null 2>&1 || { echo "image: podman-compose is not installed (Debian: apt-get install podman-compose)" >&2; exit 1; }
fi

work=$(mktemp -d /tmp/remstore-image-docs.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/networks" "$work/tmp"
cat >"$work/storage.conf" <<CONF
[storage]
driver = "vfs"
graphroot = "$work/storage"
runroot = "$work/run"
CONF
cat >"$work/containers.conf" <<CONF
[containers]
cgroups = "disabled"
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
volumes = ["$REMSTORE_IMAGE_PG_SOCK:/run/postgresql"]
[engine]
cgroup_manager = "cgroupfs"
tmp_dir = "$work/tmp"
[network]
network_config_dir = "$work/networks"
CONF

# The blocks, in order, NUL-separated; each starts with its line number.
awk '
  /^<!-- run by scripts\/image-docs.sh -->/ { want = 1; next }
  want && /^```sh/ { inblock = 1; want = 0; printf "%d\n", NR; next }
  /^```/ && inblock { inblock = 0; printf "%c", 0; next }
  inblock { print; next }
  /^```/ { want = 0 }
' docs/install.md >"$work/blocks"
n=$(tr -cd '\0' <"$work/blocks" | wc -c)
[ "$n" -ge 1 ] || { echo "image: no block of docs/install.md is marked to run here" >&2; exit 1; }

PGOPTIONS='-c client_min_messages=warning' psql -q "postgres://postgres@/postgres?host=$REMSTORE_IMAGE_PG_SOCK&sslmode=disable" \
  -c 'DROP DATABASE IF EXISTS remstore_image' -c 'CREATE DATABASE remstore_image' >/dev/null

export work
run=$(cat <<'SH'
set -euo pipefail
if [ -d /sys/fs/cgroup/unified ]; then umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup; fi
ip link set lo up
export CONTAINERS_CONF=$work/containers.conf CONTAINERS_STORAGE_CONF=$work/storage.conf
trap 'podman rm -af -t 0 >/dev/null 2>&1 || true' EXIT
status=0
while IFS= read -r -d '' block; do
  line=${block%%$'\n'*}
  code=${block#*$'\n'}
  # A reader's shell: REMSTORE_DB set as the docs ask, no other REMSTORE_
  # variable of the caller's (make test sets several).
  unset_args=()
  for v in $(compgen -e | grep '^REMSTORE_' || true); do unset_args+=(-u "$v"); done
  if ! out=$(env "${unset_args[@]}" REMSTORE_DB='postgres://postgres@/remstore_image?host=/run/postgresql&sslmode=disable' \
      bash -c "set -euo pipefail; $code" 2>&1); then
    printf 'image: docs/install.md block at line %d failed:\n%s\noutput:\n%s\n' "$line" "$code" "$out" >&2
    exit 1
  fi
  held=1
  while IFS= read -r claim; do
    if ! grep -qF -- "$claim" <<<"$out"; then
      printf 'image: docs/install.md block at line %d: output lacks %s:\n%s\n' "$line" "$claim" "$out" >&2
      held=0 status=1
    fi
  done < <(grep -o '# → .*' <<<"$code" | sed 's/^# → //; s/[[:space:]]*$//')
  [ "$held" = 0 ] || echo "image: docs/install.md block at line $line ran as written, its output as it says"
done <"$work/blocks"
[ "$status" = 0 ] || exit 1

# Not in the docs: who the server runs as.
podman run -d --name remstore-uid -e REMSTORE_API_KEYS="$(openssl rand -hex 16)" localhost/remstore >/dev/null 2>>"$work/podman.log" \
  || { cat "$work/podman.log" >&2; exit 1; }
pid=$(podman inspect --format '{{.State.Pid}}' remstore-uid)
uid=$(stat -c %u "/proc/$pid") || { podman logs remstore-uid >&2; exit 1; }
podman rm -f -t 0 remstore-uid >/dev/null 2>&1
[ "$uid" = 65532 ] || { echo "image: serve runs as uid $uid, want 65532" >&2; exit 1; }
echo "image: serve in the container runs as uid $uid"

# compose.yaml: the stack cannot start here (postgres:15 comes from a
# registry this machine does not reach); podman-compose reads it and prints
# the podman commands it would run.
if env -u REMSTORE_API_KEYS podman-compose -p remstore --dry-run up -d >"$work/compose-nokey.log" 2>&1 \
  || ! grep -q 'RuntimeError: set REMSTORE_API_KEYS' "$work/compose-nokey.log"; then
  echo "image: podman-compose does not refuse compose.yaml without REMSTORE_API_KEYS:" >&2; cat "$work/compose-nokey.log" >&2; exit 1
fi
REMSTORE_API_KEYS=compose-key podman-compose -p remstore --dry-run up -d >"$work/compose.log" 2>&1 \
  || { cat "$work/compose.log" >&2; exit 1; }
line=$(grep -E '^podman run .*--name=remstore_remstore_1 ' "$work/compose.log") \
  || { echo "image: podman-compose would not run the remstore service:" >&2; cat "$work/compose.log" >&2; exit 1; }
image=${line##* }
for want in "-e REMSTORE_API_KEYS=compose-key" "-e REMSTORE_DB=postgres://remstore:remstore@postgres:5432/remstore?sslmode=disable" "-p 127.0.0.1:8088:8088"; do
  grep -qF -- " $want " <<<"$line" || { echo "image: podman-compose's remstore lacks $want: $line" >&2; exit 1; }
done
[ "$(grep -oE -- ' -p [^ ]+' <<<"$line" | wc -l)" = 1 ] || { echo "image: podman-compose publishes more than one port: $line" >&2; exit 1; }
podman image exists "$image" || { echo "image: compose.yaml runs $image, which scripts/image.sh did not leave in the store" >&2; exit 1; }
grep -qE '^podman run .*--name=remstore_postgres_1 .* postgres:15$' "$work/compose.log" \
  || { echo "image: podman-compose would not run postgres:15:" >&2; cat "$work/compose.log" >&2; exit 1; }
echo "image: podman-compose reads compose.yaml: it would run $image (in the store) on 127.0.0.1:8088 beside postgres:15, and refuses without REMSTORE_API_KEYS"
SH
)
unshare -m -n bash -c "$run"
psql_url="postgres://postgres@/remstore_image?host=$REMSTORE_IMAGE_PG_SOCK&sslmode=disable"
stored=$(psql -qAt "$psql_url" -c "SELECT count(*) FROM messages WHERE content = 'hi'")
[ "$stored" = 1 ] || { echo "image: the message the docs store is not in PostgreSQL ($stored rows)" >&2; exit 1; }
echo "image: the message the docs store is in PostgreSQL"

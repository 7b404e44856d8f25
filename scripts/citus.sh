# shellcheck shell=bash
# Sourced by scripts/test.sh (after scripts/pg.sh). citus_ensure builds and
# installs Citus 13.2 for the PostgreSQL 15 server binaries from
# ../shared/citus/install.sh when citus.so is missing (about 5 minutes on two
# cores, once per machine). citus_start starts a cluster of its own: a
# coordinator and two workers on loopback ports, each with
# shared_preload_libraries = 'citus', joined with citus_set_coordinator_host
# and citus_add_node; it exports REMSTORE_TEST_CITUS_URL (the coordinator),
# REMSTORE_TEST_CITUS_SPARE (a third, started but not yet added, for the
# rebalance test) and REMSTORE_TEST_CITUS_WORKERS. citus_stop stops them.
#
# install.sh installs Debian's newest postgresql-server-dev-15, which can
# upgrade the PostgreSQL 15 server packages to a newer minor (Citus's patch
# for have_createdb_privilege needs 15.14+): it runs before any cluster
# starts, and scripts/pgvector.sh then pins its headers to that new version.

citus_ensure() {
  local bin=$1 shared=${REMSTORE_SHARED_DIR:-../shared}
  local pgc="$bin/pg_config"
  [ -x "$pgc" ] || { echo "citus: no pg_config in $bin" >&2; return 1; }
  [ -f "$("$pgc" --pkglibdir)/citus.so" ] && return 0
  [ -f "$shared/citus/install.sh" ] || { echo "citus: $shared/citus/install.sh not found" >&2; return 1; }
  [ "$(id -u)" = 0 ] || { echo "citus: building it needs root" >&2; return 1; }
  apt-get update -qq >/dev/null 2>&1 || true
  PG_CONFIG=$pgc bash "$shared/citus/install.sh" >&2
}

# citus_port finds a free loopback port (the kernel's choice, so parallel
# runs do not clash).
citus_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

citus_node() { # dir port
  local dir=$1 port=$2
  mkdir -p "$dir"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$dir"; fi
  pg_as "$PG_BIN/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; return 1; }
  pg_as "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c shared_preload_libraries=citus -c max_connections=300 -c shared_buffers=128MB -c max_worker_processes=32 -c wal_level=logical -c max_wal_senders=20 -c max_replication_slots=20" start >/dev/null \
    || { cat "$dir/server.log" >&2; return 1; }
  pg_as "$PG_BIN/psql" -qAt -h 127.0.0.1 -p "$port" -U postgres -d postgres -c 'CREATE EXTENSION IF NOT EXISTS citus' >/dev/null
}

citus_sql() { # port sql
  pg_as "$PG_BIN/psql" -qAt -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$1" -U postgres -d postgres -c "$2"
}

citus_start() {
  PG_BIN=${PG_BIN:-$(pg_bindir)}
  CITUS_DIR=$(mktemp -d /tmp/remstore-citus.XXXXXX)
  chmod 755 "$CITUS_DIR"
  CITUS_PORTS=()
  local i port
  for i in 0 1 2 3; do
    port=$(citus_port)
    CITUS_PORTS+=("$port")
    citus_node "$CITUS_DIR/n$i" "$port" || return 1
  done
  local c=${CITUS_PORTS[0]}
  citus_sql "$c" "SELECT citus_set_coordinator_host('127.0.0.1', $c)" >/dev/null
  citus_sql "$c" "SELECT citus_add_node('127.0.0.1', ${CITUS_PORTS[1]})" >/dev/null
  citus_sql "$c" "SELECT citus_add_node('127.0.0.1', ${CITUS_PORTS[2]})" >/dev/null
  export REMSTORE_TEST_CITUS_URL="postgres://postgres@127.0.0.1:$c/postgres?sslmode=disable"
  export REMSTORE_TEST_CITUS_SPARE="127.0.0.1:${CITUS_PORTS[3]}"
  export REMSTORE_TEST_CITUS_WORKERS="127.0.0.1:${CITUS_PORTS[1]},127.0.0.1:${CITUS_PORTS[2]}"
  echo "test: Citus $(citus_sql "$c" "SELECT extversion FROM pg_extension WHERE extname='citus'") started: coordinator :$c, workers :${CITUS_PORTS[1]} :${CITUS_PORTS[2]}, spare :${CITUS_PORTS[3]}" >&2
}

citus_stop() {
  [ -n "${CITUS_DIR:-}" ] || return 0
  local d
  for d in "$CITUS_DIR"/n*; do
    pg_as "$PG_BIN/pg_ctl" -D "$d/data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  rm -rf "$CITUS_DIR"
  CITUS_DIR=
}

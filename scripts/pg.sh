# shellcheck shell=bash
# Sourced by scripts/test.sh. pg_start starts a throwaway PostgreSQL cluster
# (initdb + pg_ctl in a temp dir, unix socket only, so no TCP port can clash)
# and exports REMSTORE_TEST_DATABASE_URL; pg_stop stops it and removes the dir.
# As root, the server binaries run as the `postgres` user (initdb refuses root).

pg_bindir() {
  if command -v pg_config >/dev/null 2>&1 && [ -x "$(pg_config --bindir)/initdb" ]; then
    pg_config --bindir; return
  fi
  local d
  d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$d" ] && [ -x "$d/initdb" ] && { echo "$d"; return; }
  command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)"
}

pg_as() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  local bin
  bin=$(pg_bindir)
  if [ -z "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test: PostgreSQL server binaries not found; installing Debian's postgresql package" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || true
    bin=$(pg_bindir)
  fi
  if [ -z "$bin" ]; then
    echo "test: no PostgreSQL server binaries (initdb, pg_ctl); set REMSTORE_TEST_DATABASE_URL or install PostgreSQL" >&2
    return 1
  fi
  PG_BIN=$bin
  PG_DIR=$(mktemp -d /tmp/remstore-pg.XXXXXX)
  chmod 755 "$PG_DIR"
  mkdir -p "$PG_DIR/data" "$PG_DIR/sock"
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$PG_DIR"; fi
  pg_as "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$PG_DIR/initdb.log" 2>&1 \
    || pg_as "$bin/initdb" -D "$PG_DIR/data" -U postgres -A trust -E UTF8 >"$PG_DIR/initdb.log" 2>&1 \
    || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  # pg_stat_statements, where the server has it, lets remstore bench count
  # the statements each operation sends.
  local preload=""
  if [ -f "$("$bin/pg_config" --pkglibdir 2>/dev/null)/pg_stat_statements.so" ]; then
    preload="-c shared_preload_libraries=pg_stat_statements"
  fi
  pg_as "$bin/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $PG_DIR/sock -c max_connections=200 -c shared_buffers=256MB $preload" start >/dev/null \
    || { cat "$PG_DIR/server.log" >&2; return 1; }
  export REMSTORE_TEST_DATABASE_URL="postgres://postgres@/postgres?host=$PG_DIR/sock&sslmode=disable"
  export REMSTORE_TEST_PG_BIN=$bin REMSTORE_TEST_PG_DATA=$PG_DIR/data REMSTORE_TEST_PG_SOCK=$PG_DIR/sock
  echo "test: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') started in $PG_DIR" >&2
}

pg_stop() {
  [ -n "${PG_DIR:-}" ] || return 0
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$PG_DIR"
  PG_DIR=
}

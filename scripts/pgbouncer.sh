# shellcheck shell=bash
# Sourced by scripts/test.sh after pg_start. pgbouncer_start puts Debian's
# PgBouncer in transaction pooling mode in front of the test PostgreSQL (on a
# loopback port; every database of the server through one wildcard entry)
# and exports REMSTORE_TEST_PGBOUNCER_URL; the storage suites then run
# through it as a database of their own (internal/dbtest). pgbouncer_stop
# stops it. As root, PgBouncer runs as the `postgres` user (it refuses root).

pgbouncer_bin() {
  command -v pgbouncer 2>/dev/null || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; }
}

pgbouncer_start() {
  local bin sock port
  bin=$(pgbouncer_bin)
  if [ -z "$bin" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test: installing Debian's pgbouncer" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null) || true
    # The package starts a system instance on 6432; the tests use their own.
    (service pgbouncer stop || systemctl stop pgbouncer) >/dev/null 2>&1 || true
    bin=$(pgbouncer_bin)
  fi
  [ -n "$bin" ] || { echo "test: no pgbouncer binary" >&2; return 1; }
  sock=${REMSTORE_TEST_PG_SOCK:-}
  [ -n "$sock" ] || { echo "test: pgbouncer needs the test PostgreSQL's socket (REMSTORE_TEST_PG_SOCK)" >&2; return 1; }
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  PGB_DIR=$(mktemp -d /tmp/remstore-pgbouncer.XXXXXX)
  chmod 755 "$PGB_DIR"
  echo '"postgres" ""' >"$PGB_DIR/userlist.txt"
  # max_user_connections caps the server connections of all the tests'
  # databases together, well under the server's max_connections (200);
  # clients beyond it wait their turn, as behind a real pooler.
  cat >"$PGB_DIR/pgbouncer.ini" <<INI
[databases]
* = host=$sock
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $PGB_DIR/userlist.txt
pool_mode = transaction
max_client_conn = 4000
default_pool_size = 8
max_user_connections = 100
server_idle_timeout = 5
server_lifetime = 60
query_wait_timeout = 60
logfile = $PGB_DIR/pgbouncer.log
pidfile = $PGB_DIR/pgbouncer.pid
INI
  if [ "$(id -u)" = 0 ]; then chown -R postgres "$PGB_DIR"; fi
  pg_as "$bin" -d "$PGB_DIR/pgbouncer.ini" || { cat "$PGB_DIR/pgbouncer.log" >&2 2>/dev/null; return 1; }
  local i
  for i in $(seq 1 50); do
    python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null && break
    sleep 0.1
  done
  export REMSTORE_TEST_PGBOUNCER_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
  echo "test: PgBouncer $("$bin" --version | head -n 1 | awk '{print $2}') (transaction pooling) on 127.0.0.1:$port" >&2
}

pgbouncer_stop() {
  [ -n "${PGB_DIR:-}" ] || return 0
  [ -f "$PGB_DIR/pgbouncer.pid" ] && kill "$(cat "$PGB_DIR/pgbouncer.pid")" 2>/dev/null || true
  sleep 0.2
  rm -rf "$PGB_DIR"
  PGB_DIR=
}

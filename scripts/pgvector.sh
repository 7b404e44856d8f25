# shellcheck shell=bash
# Sourced by scripts/test.sh before any cluster starts. pgvector_ensure makes
# the `vector` type available to the PostgreSQL 15 server binaries, so the
# peer's own sql/install.sql runs unmodified: ../shared/pgvector/install.sh
# builds it from source. Its build needs the server headers; they are
# installed here pinned to the server's own version, because Debian's newest
# postgresql-server-dev-15 would upgrade the server under a running cluster.
# Returns 1 when pgvector cannot be had (no ../shared, not root, no apt).

pgvector_ensure() {
  local bin=$1 shared=${REMSTORE_SHARED_DIR:-../shared}
  local pgc="$bin/pg_config"
  [ -x "$pgc" ] || { echo "pgvector: no pg_config in $bin" >&2; return 1; }
  if [ -f "$("$pgc" --sharedir)/extension/vector.control" ]; then return 0; fi
  [ -x "$shared/pgvector/install.sh" ] || [ -f "$shared/pgvector/install.sh" ] || {
    echo "pgvector: $shared/pgvector/install.sh not found" >&2; return 1; }
  [ "$(id -u)" = 0 ] || { echo "pgvector: building it needs root" >&2; return 1; }
  if [ ! -f "$("$pgc" --includedir-server)/postgres.h" ]; then
    local v
    v=$(dpkg-query -W -f='${Version}' postgresql-15 2>/dev/null) || { echo "pgvector: postgresql-15 is not a Debian package here" >&2; return 1; }
    echo "pgvector: installing postgresql-server-dev-15=$v (the server's version)" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-15=$v" build-essential >/dev/null) || return 1
  fi
  PG_CONFIG=$pgc bash "$shared/pgvector/install.sh" >&2
}

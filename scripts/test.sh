#!/usr/bin/env bash
# The one test command (`make test`): starts a throwaway PostgreSQL 15 cluster
# unless REMSTORE_TEST_DATABASE_URL is set, runs go vet and `go test -race`
# over every package (storage suites on PostgreSQL and SQLite), then the
# Python interop suite under each pinned pydantic-ai version. Beside the
# PostgreSQL cluster it starts a Citus cluster (coordinator + 2 workers, and a
# spare worker for the rebalance test; Citus is built once from ../shared if
# missing, see scripts/citus.sh), where the shared storage suite runs as a
# third database. The clusters are stopped even when a step fails.
#
# REMSTORE_REQUIRE_ALL=1 (set by .ci/run) makes a missing PostgreSQL or Python
# a failure instead of a skip.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REMSTORE_REQUIRE_ALL:=0}"
export REMSTORE_REQUIRE_PG=$REMSTORE_REQUIRE_ALL REMSTORE_REQUIRE_PYTHON=$REMSTORE_REQUIRE_ALL
export REMSTORE_REQUIRE_CITUS=$REMSTORE_REQUIRE_ALL REMSTORE_REQUIRE_BROWSER=$REMSTORE_REQUIRE_ALL
export REMSTORE_REQUIRE_PGBOUNCER=$REMSTORE_REQUIRE_ALL

# shellcheck source=scripts/pg.sh
source scripts/pg.sh
# shellcheck source=scripts/pgvector.sh
source scripts/pgvector.sh
# shellcheck source=scripts/citus.sh
source scripts/citus.sh
# shellcheck source=scripts/pgbouncer.sh
source scripts/pgbouncer.sh
# Stop only what this run starts: a PG_DIR or CITUS_DIR inherited from the
# caller's environment names someone else's cluster.
unset PG_DIR CITUS_DIR PGB_DIR
trap 'pgbouncer_stop; citus_stop; pg_stop' EXIT
# Citus first: building it may move the server packages to a newer minor,
# which must happen before any cluster starts (and before pgvector pins its
# headers to the server's version).
if [ -z "${REMSTORE_TEST_CITUS_URL:-}" ] && [ -z "${REMSTORE_BENCH_ONLY:-}${REMSTORE_TEST_RUN:-}" ] || [ -n "${REMSTORE_BENCH_CITUS:-}" ]; then
  if bin=$(pg_bindir) && [ -n "$bin" ] && citus_ensure "$bin" && citus_start; then
    :
  else
    [ "$REMSTORE_REQUIRE_ALL" = 1 ] && { echo "test: FAIL: the Citus cluster could not be built or started" >&2; exit 1; }
    echo "test: Citus unavailable; its tests will be skipped" >&2
  fi
fi
if [ -z "${REMSTORE_TEST_DATABASE_URL:-}" ]; then
  # The peer's install.sql needs the vector type; it is built before any
  # cluster starts (see scripts/pgvector.sh). Without ../shared/peer there
  # is no peer suite to need it.
  if [ -d "${REMSTORE_SHARED_DIR:-../shared}/peer" ] && bin=$(pg_bindir) && [ -n "$bin" ]; then
    if ! pgvector_ensure "$bin"; then
      [ "$REMSTORE_REQUIRE_ALL" = 1 ] && { echo "test: FAIL: pgvector could not be installed for the peer's schema" >&2; exit 1; }
      echo "test: pgvector unavailable; the peer suite will use remstore-migrated databases only" >&2
    fi
  fi
  if ! pg_start; then
    [ "$REMSTORE_REQUIRE_ALL" = 1 ] && { echo "test: FAIL: PostgreSQL could not be started" >&2; exit 1; }
    echo "test: PostgreSQL unavailable; its tests will be skipped" >&2
  fi
fi
# PgBouncer in transaction mode in front of the test PostgreSQL: the storage
# suites run through it as a fourth database (docs/operations.md).
if [ -z "${REMSTORE_TEST_PGBOUNCER_URL:-}" ] && [ -z "${REMSTORE_BENCH_ONLY:-}${REMSTORE_TEST_RUN:-}" ] && [ -n "${REMSTORE_TEST_PG_SOCK:-}" ]; then
  if ! pgbouncer_start; then
    [ "$REMSTORE_REQUIRE_ALL" = 1 ] && { echo "test: FAIL: PgBouncer could not be started" >&2; exit 1; }
    echo "test: PgBouncer unavailable; its tests will be skipped" >&2
  fi
fi

if [ -n "${REMSTORE_BENCH_ONLY:-}" ]; then  # make bench, make bench-peer
  mkdir -p .test-output
  # A name of its own: scripts/interop.sh (for --peer) builds .test-output/remstore
  # without the tag, which left the Go SDK turn out of make bench-peer.
  go build -tags sdkbench -ldflags "$(scripts/ldflags.sh)" -o .test-output/remstore-bench ./cmd/remstore  # the Go SDK turn too (internal/bench/sdkturn.go)
  peer=()
  if [ -n "${REMSTORE_BENCH_PEER:-}" ]; then
    scripts/interop.sh --venv-only
    peer=(--peer "${REMSTORE_SHARED_DIR:-../shared}/peer" --peer-python interop/.venv-peer/bin/python)
  fi
  if [ -n "${REMSTORE_BENCH_PYTHON:-}" ]; then  # make bench-python: the Agents SDK session beside SQLiteSession
    scripts/interop.sh --venv-only
    REMSTORE_BIN=$PWD/.test-output/remstore interop/.venv-2/bin/python interop/bench_get_items.py
    exit 0
  fi
  if [ -n "${REMSTORE_BENCH_CITUS:-}" ]; then  # make bench-citus: one node, then the 3-node cluster
    [ -n "${REMSTORE_TEST_CITUS_URL:-}" ] || { echo "bench-citus: no Citus cluster" >&2; exit 1; }
    quick=(); [ -n "${QUICK:-}" ] && quick=(--quick)
    echo "== single-node PostgreSQL"
    .test-output/remstore-bench bench --db "$REMSTORE_TEST_DATABASE_URL" --iterations "${ITERATIONS:-20}" "${quick[@]}" --json .test-output/bench-single.json
    echo "== Citus: coordinator + 2 workers"
    .test-output/remstore-bench bench --db "$REMSTORE_TEST_CITUS_URL" --iterations "${ITERATIONS:-20}" "${quick[@]}" --json .test-output/bench-citus.json
    python3 scripts/bench_compare.py .test-output/bench-single.json .test-output/bench-citus.json | tee .test-output/bench-citus.md
    exit 0
  fi
  # 10 s a side: the concurrency and HTTP figures move with fsync spells
  # on a small machine, and a longer run averages more of them.
  .test-output/remstore-bench bench --db "$REMSTORE_TEST_DATABASE_URL" --iterations "${ITERATIONS:-20}" --duration "${DURATION:-10s}" \
    --json .test-output/bench.json --svg .test-output/lookup.svg "${peer[@]}"
  exit 0
fi
if [ -n "${REMSTORE_TEST_RUN:-}" ]; then  # make soak and friends: one test, verbose
  go test -count=1 -v -timeout 60m -run "$REMSTORE_TEST_RUN" ./...  # a 10-minute soak outlasts the default 10m
  exit 0
fi

# The viewer's browser tests drive Debian's headless Chromium.
if [ -z "${REMSTORE_BENCH_ONLY:-}" ] && ! command -v chromium >/dev/null 2>&1 && [ -z "${REMSTORE_CHROMIUM:-}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test: installing Debian's chromium for the viewer's browser tests" >&2
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "test: chromium could not be installed" >&2
  fi
fi

echo "== gofmt / go vet"
unformatted=$(gofmt -l . | grep -v '^interop/.venv' || true)
[ -z "$unformatted" ] || { echo "gofmt would change: $unformatted" >&2; exit 1; }
go vet ./...
echo "== staticcheck"
go run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

echo "== go test -race ./..."
# -v so the PostgreSQL and SQLite subtests show by name; only the result
# lines are kept in the log, the full output goes to .test-output/go.log.
mkdir -p .test-output
set +e
go test -race -count=1 -v ./... >.test-output/go.log 2>&1
rc=$?
set -e
grep -E '^(\s*--- (PASS|FAIL|SKIP)|ok |FAIL|panic:|PASS$)' .test-output/go.log | grep -vE '^\s{8,}--- PASS' || true
if [ $rc -ne 0 ]; then
  echo "go test failed; the failing output:" >&2
  grep -B2 -A30 -E -- '--- FAIL|^panic:' .test-output/go.log | head -300 >&2
  exit $rc
fi
skips=$(grep -cE -- '--- SKIP' .test-output/go.log || true)
passes=$(grep -cE -- '--- PASS' .test-output/go.log || true)
echo "go: $passes passed, 0 failed, $skips skipped"
if [ "$REMSTORE_REQUIRE_ALL" = 1 ] && [ "$skips" != 0 ]; then
  echo "test: FAIL: $skips Go tests skipped under REMSTORE_REQUIRE_ALL=1" >&2
  grep -A2 -- '--- SKIP' .test-output/go.log >&2
  exit 1
fi

echo "== benchmarks, once each (figures: make bench, docs/performance.md)"
REMSTORE_BENCH_QUICK=1 go test -run XXX -bench . -benchtime 1x ./... >.test-output/bench.log 2>&1 \
  || { tail -40 .test-output/bench.log >&2; exit 1; }
echo "benchmarks: $(grep -c '^Benchmark' .test-output/bench.log) ran once"

echo "== release: goreleaser check and a snapshot of every target; the container image and docs/install.md's container commands"
scripts/release.sh
if [ -z "${REMSTORE_TEST_PG_SOCK:-}" ]; then
  # The image is run against the test cluster's socket; an outside
  # REMSTORE_TEST_DATABASE_URL has none to lend it.
  [ "$REMSTORE_REQUIRE_ALL" = 1 ] && { echo "test: FAIL: no test PostgreSQL socket to run the image against" >&2; exit 1; }
  echo "test: the image is built and checked; not run, and docs/install.md's container commands and compose.yaml not checked (no test PostgreSQL socket)" >&2
fi
REMSTORE_IMAGE_PG_SOCK=${REMSTORE_TEST_PG_SOCK:-} scripts/image.sh

echo "== interop (pydantic-ai, PyYAML)"
scripts/interop.sh

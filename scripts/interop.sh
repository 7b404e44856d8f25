#!/usr/bin/env bash
# Runs the Python interop suite (interop/) once per pinned pydantic-ai
# version, each in its own venv under interop/.venv-<name> (created on first
# use, rebuilt when its requirements file changes). The suite drives a
# remstore binary built here.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${REMSTORE_REQUIRE_PYTHON:=0}"
PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null 2>&1 || ! "$PY" -c 'import sys; assert sys.version_info >= (3, 10)' 2>/dev/null; then
  if [ "$REMSTORE_REQUIRE_PYTHON" = 1 ]; then echo "interop: FAIL: Python >= 3.10 not found" >&2; exit 1; fi
  echo "interop: Python >= 3.10 not found; skipping" >&2; exit 0
fi
mkdir -p .test-output
go build -ldflags "$(scripts/ldflags.sh)" -o .test-output/remstore ./cmd/remstore
export REMSTORE_BIN=$PWD/.test-output/remstore
# The Go half of the pydantic-ai oracle for the SDK adapters (test_sdk_oracle.py).
go build -o .test-output/sdkreq ./internal/cmd/sdkreq
export REMSTORE_SDKREQ_BIN=$PWD/.test-output/sdkreq
# The Go agent of the cross-language session (interop/peer/test_cross_language.py).
go build -o .test-output/openai-chat ./examples/openai-chat
export REMSTORE_EXAMPLE_OPENAI_BIN=$PWD/.test-output/openai-chat

# venv NAME REQUIREMENTS: interop/.venv-NAME, (re)built when the file changes.
venv() {
  local venv=interop/.venv-$1 req=$2 stamp
  stamp=$(sha256sum "$req" | cut -c1-16)
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "interop: creating $venv from $req" >&2
    rm -rf "$venv"
    "$PY" -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
    echo "$stamp" >"$venv/.stamp"
  fi
  # The Python client from this checkout, every run (it changes with the
  # code; its dependencies are pinned in the requirements file).
  "$venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation --force-reinstall ./python
}

# pytest VENV ARGS...: exit 5 (nothing collected) is a failure too.
run_pytest() {
  local venv=$1; shift
  set +e
  "interop/.venv-$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
  local rc=$?
  set -e
  if [ $rc -eq 5 ]; then echo "interop: FAIL: pytest collected no tests" >&2; exit 1; fi
  [ $rc -eq 0 ] || exit $rc
}

if [ "${1:-}" = --venv-only ]; then  # make bench-peer, bench-python: the venvs, nothing else
  venv peer interop/peer/requirements.txt
  venv 2 interop/requirements-2.txt
  exit 0
fi

for req in interop/requirements-*.txt; do
  name=$(basename "$req" .txt); name=${name#requirements-}
  venv "$name" "$req"
  version=$("interop/.venv-$name/bin/python" -c 'import importlib.metadata as m; print(m.version("pydantic-ai-slim"))')
  echo "== pytest with pydantic-ai-slim $version"
  run_pytest "$name" interop --ignore=interop/peer
done

# The client's types, as a user's type checker sees them.
echo "== mypy --strict python/src/remstore"
interop/.venv-2/bin/python -m mypy --strict --no-incremental python/src/remstore

# The peer's own code against the same PostgreSQL, both ways (interop/peer).
# Without ../shared/peer (a user's clone) the suite reports itself skipped;
# under REMSTORE_REQUIRE_ALL=1 it fails instead.
echo "== the peer's own code (../shared/peer), both ways"
venv peer interop/peer/requirements.txt
run_pytest peer interop/peer -rs -W ignore::UserWarning

# The peer beside remstore in the benchmark, once, at small sizes (make
# bench-peer runs it at full sizes; figures in docs/performance.md).
if [ -n "${REMSTORE_TEST_DATABASE_URL:-}" ] && [ -d "${REMSTORE_SHARED_DIR:-../shared}/peer" ]; then
  echo "== remstore bench --peer, once at small sizes (workloads, size sweep, concurrency, HTTP)"
  "$REMSTORE_BIN" bench --db "$REMSTORE_TEST_DATABASE_URL" --quick --iterations 3 \
    --peer "${REMSTORE_SHARED_DIR:-../shared}/peer" --peer-python interop/.venv-peer/bin/python
fi

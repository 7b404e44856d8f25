#!/usr/bin/env bash
# govulncheck over the module. With VULNDB=snapshot (as .ci/run uses it) it
# reads the snapshot in ../shared/vulndb, since CI cannot reach vuln.go.dev;
# otherwise the live database. Any finding fails. govulncheck is pinned to
# v1.1.4: newer releases need a golang.org/x/telemetry the module proxy does
# not serve.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
if [ "${VULNDB:-live}" = snapshot ]; then
  # || true: without the folder ls fails, and pipefail ended the script
  # here with exit 2 and not a word.
  snap=$(ls "${REMSTORE_SHARED_DIR:-../shared}"/vulndb/vulndb-*.tar.gz 2>/dev/null | sort | tail -n 1 || true)
  [ -n "$snap" ] || { echo "vuln: no snapshot in ${REMSTORE_SHARED_DIR:-../shared}/vulndb" >&2; exit 1; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  tar xzf "$snap" -C "$tmp"
  args=(-db "file://$tmp/vulndb")
  echo "vuln: database $(basename "$snap" .tar.gz) (snapshot)"
else
  echo "vuln: database vuln.go.dev (live)"
fi
go run golang.org/x/vuln/cmd/govulncheck@v1.1.4 "${args[@]}" ./...

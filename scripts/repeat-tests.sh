#!/usr/bin/env bash
# Runs the built test suite N times in a row (default 10) and stops at the first failing run,
# printing its log. Flaky tests show up here; fix them at their cause, never by retrying.
#   ./scripts/repeat-tests.sh 20
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
shift || true
swift build --build-tests >/dev/null || { echo "repeat-tests: build failed" >&2; exit 1; }
logs=$(mktemp -d)
for ((i = 1; i <= runs; i++)); do
  log="$logs/run-$i.log"
  start=$(date +%s)
  if swift test --skip-build "$@" >"$log" 2>&1; then
    echo "repeat-tests: run $i/$runs passed ($(( $(date +%s) - start )) s)"
  else
    status=$?
    cat "$log"
    echo "repeat-tests: run $i/$runs FAILED (exit $status); log kept in $log" >&2
    exit 1
  fi
done
rm -rf "$logs"
echo "repeat-tests: all $runs runs passed"

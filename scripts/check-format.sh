#!/usr/bin/env bash
# Fails when any Swift file is not formatted with the repo's .swift-format.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.swift' 2>/dev/null || find Sources Tests bench -name '*.swift')
out=$(swift format lint --configuration .swift-format $files 2>&1 || true)
if [ -n "$out" ]; then
  echo "$out" | head -40
  echo "check-format: run 'swift format --in-place --configuration .swift-format -r Sources Tests bench'" >&2
  exit 1
fi

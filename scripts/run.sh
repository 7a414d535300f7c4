#!/usr/bin/env bash
# Runs thumbd (release build) with built-in defaults; extra arguments go to thumbd.
#   ./scripts/run.sh                      # listens on 127.0.0.1:8080
#   ./scripts/run.sh --port 9000 --workers 4
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
swift build -c release --product thumbd >&2
exec "$(swift build -c release --show-bin-path)/thumbd" "$@"

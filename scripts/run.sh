#!/usr/bin/env bash
# Runs thumbd (release build) with built-in defaults and glibc's malloc settings for it
# (scripts/glibc-tunables.sh); extra arguments go to thumbd.
#   ./scripts/run.sh                      # listens on 127.0.0.1:8080
#   ./scripts/run.sh --port 9000 --workers 4
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
swift build -c release --product thumbd >&2
bin="$(swift build -c release --show-bin-path)/thumbd"
# shellcheck source=scripts/glibc-tunables.sh
source scripts/glibc-tunables.sh
# Exported only now, for thumbd: the build keeps glibc's defaults.
export GLIBC_TUNABLES="$thumbd_glibc_tunables"
exec "$bin" "$@"

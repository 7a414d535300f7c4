#!/usr/bin/env bash
# Runs the whole test suite: installs missing Debian packages, checks formatting, builds,
# runs every test (Swift Testing) against real libvips, real sockets and in-process origins.
set -euo pipefail
cd "$(dirname "$0")/.."
# python3 and nodejs run the README's URL-signing snippets against the server.
# prometheus brings promtool, which checks the /metrics page (MetricsTests).
./scripts/setup.sh python3 nodejs prometheus
# The reference BlurHash and ThumbHash decoders (PyPI) the /info tests compare with.
./scripts/pyref.sh
./scripts/check-format.sh
swift build --build-tests
swift test --skip-build
# Not yet: ./scripts/sanitize.sh (ASan + TSan). Its TSan run still reports the timed VipsSource's
# handoff to a libvips worker thread and one race in TestOriginCore.serve (see the README).

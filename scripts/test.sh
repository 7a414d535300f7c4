#!/usr/bin/env bash
# Runs the whole test suite: installs missing Debian packages, checks formatting, builds,
# runs every test (Swift Testing) against real libvips, real sockets and in-process origins, then
# runs them again under ASan and TSan.
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
# The suite again under AddressSanitizer (with LeakSanitizer) and ThreadSanitizer, each in its own
# build directory; any report fails the run (CONTRIBUTING.md, "Sanitizers").
./scripts/sanitize.sh

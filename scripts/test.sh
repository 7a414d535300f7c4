#!/usr/bin/env bash
# Runs the whole test suite: installs missing Debian packages, checks formatting, builds,
# runs every test (Swift Testing) against real libvips, real sockets and in-process origins.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/check-format.sh
swift build --build-tests
swift test --skip-build

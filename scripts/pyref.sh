#!/usr/bin/env bash
# Installs the reference implementations the placeholder tests compare /info with — PyPI's
# blurhash, thumbhash-python and pillow, pinned by version and by the sha256 of each wheel — into
# a venv under .build/pyref (PlaceholderReferenceTests runs its python; without it those tests
# fail). Idempotent: quiet when the pinned set is there. scripts/test.sh runs it.
#
# The hashes, not TLS, vouch for the bytes: a fresh machine may reach PyPI through a
# TLS-inspecting proxy whose CA it does not trust (a debootstrapped root does not), so pip is told
# to trust PyPI's hosts and refuses any file whose sha256 is not the one below. `--no-deps`:
# thumbhash-python's encode/decode need only Pillow (its other dependencies are for its CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh python3 python3-venv
venv=.build/pyref/venv
requirements=".build/pyref/requirements.txt"
pinned="blurhash==1.1.5 --hash=sha256:96a8686e8b9fced1676550b814e59256214e2d4033202b16c91271ed4d317fec
thumbhash-python==1.0.1 --hash=sha256:b1bc4ac08ff4354dba70a0caf85a9b3f3522181fbd3e05eb4f03aa786a36578b
pillow==10.4.0 --hash=sha256:5e84b6cc6a4a3d76c153a6b19270b3526a5a8ed6b09501d3af891daa2a9de7d6"
if [ "$(cat "$venv/installed" 2>/dev/null)" != "$pinned" ]; then
  echo "pyref: installing blurhash 1.1.5, thumbhash-python 1.0.1, pillow 10.4.0 into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  printf '%s\n' "$pinned" >"$requirements"
  PIP_FIND_LINKS= "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: --trusted-host pypi.org --trusted-host files.pythonhosted.org -r "$requirements"
  printf '%s' "$pinned" >"$venv/installed"
fi

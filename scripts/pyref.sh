#!/usr/bin/env bash
# Installs the reference implementations the placeholder tests compare /info with — PyPI's
# blurhash, thumbhash-python and pillow, pinned — into a venv under .build/pyref
# (PlaceholderReferenceTests runs its python; without it those tests fail). Idempotent: quiet
# when the pinned set is there. scripts/test.sh runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh python3 python3-venv
venv=.build/pyref/venv
packages=(blurhash==1.1.5 thumbhash-python==1.0.1 pillow==10.4.0)
if [ "$(cat "$venv/installed" 2>/dev/null)" != "${packages[*]}" ]; then
  echo "pyref: installing ${packages[*]} into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "${packages[@]}"
  echo "${packages[*]}" >"$venv/installed"
fi

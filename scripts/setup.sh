#!/usr/bin/env bash
# Installs the Debian packages thumbd needs to build, run and test, if any is missing.
# Idempotent; quiet when everything is there. Uses sudo when not root.
set -euo pipefail
packages=(pkg-config libvips-dev libmicrohttpd-dev libcurl4-openssl-dev libssl-dev ca-certificates)
packages+=("$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q >/dev/null
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "setup: the Swift 6 toolchain must be on PATH (swift.org)" >&2; exit 1; }

#!/usr/bin/env bash
# Checks thumbd against openapi.yaml with schemathesis (every check, positive and negative data)
# for about two minutes; exits non-zero on any finding or warning.
#   scripts/schemathesis.sh                     seed 1, 100 s of testing
#   SEED=7 MAX_TIME=600 scripts/schemathesis.sh  another seed, longer
# It installs schemathesis (pinned) into a venv under .build/schemathesis, builds thumbd (debug),
# starts a small origin (scripts/schemathesis/origin.py, two PNGs) and thumbd, both on 127.0.0.1,
# runs schemathesis against thumbd only, and stops both. Nothing leaves 127.0.0.1: thumbd fetches
# from 127.0.0.1 alone (--allowed-source-hosts 127.0.0.1, checked below before the run).
# Settings and why: scripts/schemathesis/config.toml; local sources: scripts/schemathesis/hooks.py.
# Output: .build/schemathesis/{thumbd,origin}.log.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh python3 python3-venv curl
root=$(pwd)
work=$root/.build/schemathesis
version=4.32.5
seed=${SEED:-1}
max_time=${MAX_TIME:-100}
mkdir -p "$work"

if [ "$("$work/venv/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $version" ]; then
  echo "schemathesis: installing schemathesis $version into $work/venv" >&2
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet "schemathesis==$version"
fi
# From here on everything talks to 127.0.0.1 directly: curl and schemathesis (requests) would
# otherwise send through a proxy named in the environment (thumbd's libcurl ignores those).
unset http_proxy https_proxy all_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY
export NO_PROXY='*' no_proxy='*'
echo "schemathesis: building thumbd" >&2
nice -n 5 swift build --product thumbd >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" >&2; exit 1; }
thumbd="$(swift build --show-bin-path)/thumbd"

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Waits up to 20 s for a file to have a line matching a pattern; prints the match.
await() {
  local file=$1 pattern=$2
  for _ in $(seq 200); do
    if grep -m1 -o "$pattern" "$file" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "schemathesis: gave up waiting for $pattern in $file" >&2
  return 1
}

rm -f "$work/origin.port"
python3 scripts/schemathesis/origin.py "$work/origin.port" >"$work/origin.log" 2>&1 &
pids+=($!)
origin_port=$(await "$work/origin.port" '^[0-9][0-9]*')

export THUMBD_ADMIN_TOKEN
THUMBD_ADMIN_TOKEN=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
"$thumbd" --host 127.0.0.1 --port 0 --allow-loopback-sources --allowed-source-hosts 127.0.0.1 \
  --source-base-url "http://127.0.0.1:$origin_port" \
  --workers 2 --server-threads 2 --cache-bytes 128M --work-bytes 128M --drain-delay 0 --shutdown-grace 1 \
  --log-requests false >"$work/thumbd.log" 2>&1 &
pids+=($!)
port=$(await "$work/thumbd.log" 'listening on 127\.0\.0\.1:[0-9]*' | sed 's/.*://')
base=http://127.0.0.1:$port

# The fence: a source on another host is refused at once, without a fetch or a DNS query.
started=$(date +%s%N)
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/thumb?url=http%3A%2F%2Fexample.org%2Fa.png&w=10")
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
if [ "$status" != 403 ] || [ "$elapsed_ms" -gt 1000 ]; then
  echo "schemathesis: thumbd answered $status in $elapsed_ms ms for a source on another host (want 403 at once)" >&2
  exit 1
fi
status=$(curl -s -o /dev/null -w '%{http_code}' "$base/thumb?url=http%3A%2F%2F127.0.0.1%3A$origin_port%2Fa.png&w=10")
[ "$status" = 200 ] || { echo "schemathesis: the local origin's image answered $status" >&2; exit 1; }

echo "schemathesis: thumbd on $base, origin on 127.0.0.1:$origin_port, seed $seed, $max_time s" >&2
export THUMBD_ORIGIN=http://127.0.0.1:$origin_port
export SCHEMATHESIS_HOOKS=$root/scripts/schemathesis/hooks.py
set +e
"$work/venv/bin/schemathesis" --config-file scripts/schemathesis/config.toml run openapi.yaml \
  --url "$base" --checks all --seed "$seed" --max-time "$max_time" --no-color
rc=$?
set -e
if ! kill -0 "${pids[1]}" 2>/dev/null; then
  echo "schemathesis: thumbd is no longer running (log: $work/thumbd.log)" >&2
  rc=1
fi
exit $rc

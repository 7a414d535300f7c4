#!/usr/bin/env bash
# Compares malloc settings on the cold-miss load: for each setting, a fresh release thumbd
# (--cache-bytes 256M) takes SECONDS of wrk -t2 -c4 cold misses over the corpus (every request
# a new source URL, widths 200–399); prints CPU ms per miss, peak RSS (VmHWM) and RSS after.
#   bench/allocators.sh            # 30 s per setting (SECONDS=...)
# Needs what bench/run.sh installs (run it once first) and libjemalloc2 (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${SECONDS_PER_SETTING:-30}
sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e "$jemalloc" ] || DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q libjemalloc2 >/dev/null
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh

run() {  # label, env assignments..., --, thumbd flags...
  local label=$1; shift
  local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" "$bin" --allow-loopback-sources --port 18180 --cache-bytes 256M "$@" 2>"$work/logs/$label.log" &
  pid=$!
  sleep 1
  local t0; t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
  wrk -t2 -c4 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18180 \
    -- cold "$work/names.txt" http://127.0.0.1:18181/src "$label-$$" 2 >/dev/null
  local t1; t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
  local n; n=$(grep -c 'route=/thumb status=200' "$work/logs/$label.log" || true)
  local hwm rss; hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status"); rss=$(awk '/VmRSS/ {print int($2/1024)}' "/proc/$pid/status")
  printf '| %s | %s | %s | %s MiB | %s MiB |\n' "$label" "$n" "$(( n > 0 ? (t1 - t0) * 10 / n : 0 ))" "$hwm" "$rss"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

echo "| setting | misses in ${secs} s | CPU ms / miss | peak RSS | RSS after |"
echo "|---|---|---|---|---|"
run glibc-defaults -- --malloc-arenas 0 --malloc-mmap-threshold 0
run arenas-2 -- --malloc-arenas 2 --malloc-mmap-threshold 0
run jemalloc "LD_PRELOAD=$jemalloc" -- --malloc-arenas 0 --malloc-mmap-threshold 0
run 256K-threshold X=1 -- --malloc-mmap-threshold 256K
run shipped-default --

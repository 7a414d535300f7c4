#!/usr/bin/env bash
# Back-to-back cold-miss runs on one thumbd per mmap threshold: user/system CPU ms per miss, page
# faults per miss and peak RSS (VmHWM) after each run. The trim threshold is 8 x the mmap threshold
# (MallocTuning). Setup: bench/malloc-setup.sh (nginx origin on 18181, release build).
#   SETTINGS="256K 1M 4M 0" SECS=60 RUNS=3 bench/malloc-thresholds.sh
# THUMBD_BIN=path measures that binary instead of a fresh release build of the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
secs=${SECS:-60}
stat3() { awk '{print $10, $14, $15}' "/proc/$1/stat"; }
for s in ${SETTINGS:-256K 1M 4M 0}; do
  "$bin" --allow-loopback-sources --port 18180 --cache-bytes 256M --malloc-mmap-threshold "$s" 2>"$work/logs/thr-$s.log" &
  pid=$!
  sleep 1
  line="threshold $s"
  for r in $(seq "${RUNS:-3}"); do
    n0=$(grep -c 'route=/thumb status=200' "$work/logs/thr-$s.log" || true)
    read -r f0 u0 s0 < <(stat3 "$pid")
    wrk -t2 -c4 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18180 \
      -- cold "$work/names.txt" http://127.0.0.1:18181/src "thr$s-$r-$$" 2 >/dev/null
    read -r f1 u1 s1 < <(stat3 "$pid")
    sleep 0.3
    n1=$(grep -c 'route=/thumb status=200' "$work/logs/thr-$s.log" || true)
    n=$((n1 - n0))
    hwm=$(awk '/VmHWM/ {print int($2/1024)}' "/proc/$pid/status")
    line="$line | run $r: $n misses, user $(((u1 - u0) * 10 / n)) ms, sys $(((s1 - s0) * 10 / n)) ms, $(((f1 - f0) / n)) faults/miss, peak $hwm MiB"
  done
  echo "$line"
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
done

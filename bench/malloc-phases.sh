#!/usr/bin/env bash
# One thumbd through the phases bench/run.sh puts it through before its memory runs — cold misses
# (60 s), new sizes of new sources (60 s), then three 120-s cold-miss runs — printing per phase
# the images answered, user/system CPU ms per image, the phase's peak RSS (sampled every 100 ms),
# RSS once idle, and the cache and work charge from /metrics; at the end glibc's malloc_stats
# (through gdb, when installed): how much of each heap is in use and how much is free holes.
#   bench/malloc-phases.sh [thumbd flags...]       e.g. --malloc-trim-interval 0
# THUMBD_BIN=path measures that binary instead of a fresh release build of the tree. Setup:
# bench/malloc-setup.sh (nginx origin on 18181, release build).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
log="$work/logs/phases.log"
"$bin" --allow-loopback-sources --port 18180 --cache-bytes 256M "$@" 2>"$log" &
pid=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:18180/livez >/dev/null && break; sleep 0.1; done
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$pid/status"; }
phase() {  # mode seconds tag
  local mode=$1 secs=$2 tag=$3 max=0 n0 n1 u0 s0 u1 s1 n
  n0=$(grep -c 'route=/thumb status=200' "$log" || true)
  read -r u0 s0 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  wrk -t2 -c4 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18180 \
    -- "$mode" "$work/names.txt" http://127.0.0.1:18181/src "phases-$tag-$$" 2 >/dev/null &
  local load=$!
  while kill -0 "$load" 2>/dev/null; do r=$(rss); [ "$r" -gt "$max" ] && max=$r; sleep 0.1; done
  sleep 1
  n1=$(grep -c 'route=/thumb status=200' "$log" || true)
  read -r u1 s1 < <(awk '{print $14, $15}' "/proc/$pid/stat")
  n=$((n1 - n0)); [ "$n" -gt 0 ] || n=1
  printf '| %s | %s | %s | %s | %s MiB | %s MiB | %s |\n' "$tag" "$((n1 - n0))" "$(((u1 - u0) * 10 / n))" \
    "$(((s1 - s0) * 10 / n))" "$max" "$(rss)" "$(curl -s http://127.0.0.1:18180/metrics | awk \
      '/^thumbd_cache_bytes\{/ {c+=$2} /^thumbd_work_memory_bytes / {w=$2} END {printf "cache %d MiB, work %d MiB", c/1048576, w/1048576}')"
}
echo "| phase | images | user ms/image | sys ms/image | peak RSS | idle RSS | charged when idle |"
echo "|---|---|---|---|---|---|---|"
phase cold 60 cold
phase newsize 60 newsize
for r in 1 2 3; do phase cold 120 "memory-$r"; done
if command -v gdb >/dev/null; then
  gdb -p "$pid" -batch -ex 'call (void) malloc_stats()' >/dev/null 2>&1 || true
  sleep 0.5
  echo; echo "malloc_stats when idle:"; grep -A2 -E "^(Arena|Total)" "$log" | grep -v -- "--" || true
fi
kill "$pid"; wait "$pid" 2>/dev/null || true

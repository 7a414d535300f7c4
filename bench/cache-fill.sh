#!/usr/bin/env bash
# Does a full cache make cold misses dearer? Two thumbd processes of one build, one with a cache
# that fills within the first slice (A, --cache-bytes 256M as in run.sh) and one that never fills
# (B, 4G), get the same cold-miss load at once (so the VM's speed drift hits both alike) in
# SLICES (5) consecutive slices of SECS (40) seconds; per slice and process: images, user and
# system CPU ms and page faults per image, RSS. A_ARGS / B_ARGS replace the two cache flags;
# B_BIN runs B from another binary (two builds side by side).
#   bench/cache-fill.sh                 THUMBD_BIN=… skips the build (see bench/malloc-setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
origin=http://127.0.0.1:18181/src
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; cleanup' EXIT
served() { grep -c 'route=/thumb status=200' "$work/logs/cache-fill-$1.log" || true; }
read -ra a_args <<<"${A_ARGS:---cache-bytes 256M}"
read -ra b_args <<<"${B_ARGS:---cache-bytes 4G}"
start_thumbd "$bin" 18421 "$work/logs/cache-fill-A.log" "${a_args[@]}"
start_thumbd "${B_BIN:-$bin}" 18422 "$work/logs/cache-fill-B.log" "${b_args[@]}"
secs=${SECS:-40}
declare -A f0 u0 s0 n0
for s in $(seq "${SLICES:-5}"); do
  for t in A B; do
    p=${pids[0]}
    [ "$t" = B ] && p=${pids[1]}
    read -r f0[$t] u0[$t] s0[$t] < <(awk '{print $10, $14, $15}' "/proc/$p/stat")
    n0[$t]=$(served "$t")
  done
  loads=()
  for port in 18421 18422; do
    wrk -t1 -c2 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua "http://127.0.0.1:$port" \
      -- cold "$work/names.txt" "$origin" "cache-fill-$port-$s-$$" 1 >/dev/null &
    loads+=("$!")
  done
  wait "${loads[@]}"
  sleep 1
  line="slice $s:"
  for t in A B; do
    p=${pids[0]}
    [ "$t" = B ] && p=${pids[1]}
    read -r f1 u1 s1 < <(awk '{print $10, $14, $15}' "/proc/$p/stat")
    n=$(($(served "$t") - n0[$t]))
    if [ "$n" -eq 0 ]; then
      line="$line  $t: no image served (see $work/logs/cache-fill-$t.log)"
      continue
    fi
    rss=$(awk '/VmRSS/ {r = int($2 / 1024)} /VmHWM/ {h = int($2 / 1024)} END {print r " MiB (peak " h}' "/proc/$p/status")
    # clock ticks are 10 ms
    line="$line  $t: images $n, user $(((u1 - u0[$t]) * 10 / n)) sys $(((s1 - s0[$t]) * 10 / n)) ms/image, faults $(((f1 - f0[$t]) / n))/image, RSS $rss MiB so far)"
  done
  echo "$line"
done
echo "A = $bin ${a_args[*]}, B = ${B_BIN:-$bin} ${b_args[*]}"

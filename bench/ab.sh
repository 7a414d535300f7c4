#!/usr/bin/env bash
# Two thumbd builds side by side, for a change to the hit or the cold-miss path: CPU speed on this
# machine drifts by a third within tens of seconds, so two runs one after the other compare the
# minutes they ran in, not the builds. Both processes are alive at once and given the same load.
#   bench/ab.sh hit  A_BIN B_BIN [SLICES]   both get 40 s of cold misses and 40 s of new sizes
#                                           at once (a cache of thousands of entries, as in
#                                           run.sh's main process), then SLICES (6) alternating
#                                           5-s `wrk -t2 -c8` hit runs each (-c from
#                                           HIT_CONNECTIONS, 8); totals and B/A
#   bench/ab.sh cold A_BIN B_BIN [SECONDS]  the same cold-miss load on both at once (SECONDS, 90):
#                                           images, user/system CPU ms and page faults per image,
#                                           peak RSS each
# Run it twice with A and B swapped: the order within a slice pair is not neutral. Setup:
# bench/origin-setup.sh (corpus, nginx origin on 127.0.0.1:18181), told to build nothing: both
# binaries are given.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?hit or cold}
a=${2:?A binary}
b=${3:?B binary}
THUMBD_BIN=$a
# shellcheck source=bench/origin-setup.sh
source bench/origin-setup.sh
origin=http://127.0.0.1:18181/src
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; cleanup' EXIT
start() { start_thumbd "$1" "$2" "$work/logs/ab-$3.log" --cache-bytes 256M; } # BIN PORT TAG
load() { # MODE SECONDS PORT TAG: one wrk of misses.lua
  wrk -t1 -c2 -d"$2"s --timeout 30s -s bench/lua/misses.lua "http://127.0.0.1:$3" \
    -- "$1" "$work/names.txt" "$origin" "ab-$4-$$" 1 >/dev/null
}
start "$a" 18411 A
start "$b" 18412 B
pa=${pids[0]}
pb=${pids[1]}
case "$mode" in
  hit)
    slices=${4:-6}
    hits="$work/ab-hits.txt"
    while read -r name; do
      printf '/thumb?url=%s&w=300\n' "$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$origin/$name")"
    done <"$work/names.txt" >"$hits"
    for port in 18411 18412; do
      for _ in 1 2; do while read -r p; do curl -s -o /dev/null "http://127.0.0.1:$port$p"; done <"$hits"; done
    done
    for m in cold newsize; do
      load "$m" 40 18411 A &
      w1=$!
      load "$m" 40 18412 B &
      w2=$!
      wait "$w1" "$w2"
    done
    ta=0
    tb=0
    for s in $(seq "$slices"); do
      line="slice $s:"
      for port in 18411 18412; do
        n=$(wrk -t2 -c"${HIT_CONNECTIONS:-8}" -d5s -s bench/lua/cycle.lua "http://127.0.0.1:$port" -- "$hits" | awk '/requests in/ {print $1}')
        if [ "$port" = 18411 ]; then ta=$((ta + n)); line="$line A $n"; else tb=$((tb + n)); line="$line B $n"; fi
      done
      echo "$line"
    done
    echo "hit requests: A ($a) $ta, B ($b) $tb, B/A $(python3 -c "print(round($tb / $ta, 3))")"
    ;;
  cold)
    secs=${4:-90}
    read -r fa0 ua0 sa0 < <(awk '{print $10, $14, $15}' "/proc/$pa/stat")
    read -r fb0 ub0 sb0 < <(awk '{print $10, $14, $15}' "/proc/$pb/stat")
    load cold "$secs" 18411 A &
    w1=$!
    load cold "$secs" 18412 B &
    w2=$!
    wait "$w1" "$w2"
    sleep 1
    for t in A B; do
      pid=$pa
      f0=$fa0 u0=$ua0 s0=$sa0
      [ "$t" = B ] && pid=$pb f0=$fb0 u0=$ub0 s0=$sb0
      read -r f1 u1 s1 < <(awk '{print $10, $14, $15}' "/proc/$pid/stat")
      n=$(grep -c 'route=/thumb status=200' "$work/logs/ab-$t.log")
      hwm=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
      # clock ticks are 10 ms
      echo "$t: images $n, user $(((u1 - u0) * 10 / n)) sys $(((s1 - s0) * 10 / n)) ms/image, faults $(((f1 - f0) / n))/image, peak $hwm MiB"
    done
    echo "A = $a, B = $b"
    ;;
  *)
    echo "usage: bench/ab.sh hit|cold A_BIN B_BIN [SLICES|SECONDS]" >&2
    exit 2
    ;;
esac

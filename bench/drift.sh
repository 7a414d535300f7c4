#!/usr/bin/env bash
# Does one thumbd process get dearer per cold miss the longer it runs, and after what? One release
# thumbd (run.sh's flags: --cache-bytes 256M --workers 2) gets a sequence of phases (PHASES, by
# default "cold cold hit cold newsize cold hit cold"); every cold phase is a SECS-second (30)
# cold-miss slice (wrk -c4, format=jpeg, as run.sh) followed by a floor slice of the same length,
# so each cold figure has its reference beside it. Other phases load thumbd for SECS seconds:
# hit (wrk -c64 over the corpus at w=300), newsize (new widths of cached originals).
# Per cold slice: images, user and system CPU ms and page faults per image, RSS, and the floor's
# CPU ms per image and images/s.
#   bench/drift.sh                  THUMBD_BIN=… skips the build (see bench/malloc-setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
origin=http://127.0.0.1:18181/src
floor=${FLOOR_BIN:-bench/work/bin/floor}
[ -x "$floor" ] || { echo "no floor at $floor (bench/run.sh builds it)" >&2; exit 1; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; cleanup' EXIT
secs=${SECS:-30}
read -ra extra <<<"${THUMBD_ARGS:-}"
start_thumbd "$bin" 18431 "$work/logs/drift.log" --cache-bytes 256M --workers 2 "${extra[@]}"
p=${pids[0]}
hits="$work/drift-hits.txt"
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
: >"$hits"
while read -r n; do echo "/thumb?url=$(enc "$origin/$n")&w=300" >>"$hits"; done <"$work/names.txt"
while read -r path; do curl -sf -o /dev/null "http://127.0.0.1:18431$path" || true; done <"$hits"
served() { grep -c 'cache=miss' "$work/logs/drift.log" || true; }
slice=0
for phase in ${PHASES:-cold cold hit cold newsize cold hit cold}; do
  slice=$((slice + 1))
  case $phase in
  hit)
    wrk -t2 -c64 -d"${secs}s" -s bench/lua/cycle.lua http://127.0.0.1:18431 -- "$hits" |
      awk -v s="$slice" '/Requests\/sec/ {print "slice " s ": hit " $2 " req/s"}'
    ;;
  newsize)
    wrk -t2 -c4 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18431 \
      -- newsize "$work/names.txt" "$origin" "drift-$$" 2 |
      awk -v s="$slice" '/Requests\/sec/ {print "slice " s ": newsize " $2 " req/s"}'
    ;;
  cold)
    read -r f0 u0 s0 < <(awk '{print $10, $14, $15}' "/proc/$p/stat")
    n0=$(served)
    wrk -t2 -c4 -d"${secs}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18431 \
      -- cold "$work/names.txt" "$origin" "drift-$$-$slice" 2 >/dev/null
    sleep 1
    read -r f1 u1 s1 < <(awk '{print $10, $14, $15}' "/proc/$p/stat")
    n=$(($(served) - n0))
    rss=$(awk '/VmRSS/ {print int($2 / 1024)}' "/proc/$p/status")
    fl=$("$floor" --corpus "$corpus_dir" --threads 2 --seconds "$secs" |
      python3 -c 'import json, sys; j = json.load(sys.stdin); print("%.1f ms/image, %.2f images/s" % (j["cpu_seconds"] * 1000 / j["requests"], j["rps"]))')
    # clock ticks are 10 ms
    echo "slice $slice: cold images $n ($(python3 -c "print(f'{$n / $secs:.2f}')") /s), user $(((u1 - u0) * 10 / n)) sys $(((s1 - s0) * 10 / n)) ms/image, faults $(((f1 - f0) / n))/image, RSS $rss MiB | floor $fl"
    ;;
  *) echo "unknown phase $phase" >&2; exit 1 ;;
  esac
done
echo "thumbd: $bin ${extra[*]}"

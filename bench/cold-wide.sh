#!/usr/bin/env bash
# The cold miss against the plain libvips floor on a wider corpus than run.sh's: every distinct
# JPEG and PNG of 0.4-24 MP in the same Debian packages (`bench/corpus.sh --wide`, no quotas, so
# many small images), where thumbd's fixed costs per request — the fetch over HTTP, the header
# check, the answer, the cache — weigh the most against the floor's decode + resize + encode.
# Not part of run.sh; run.sh's corpus and targets stay the headline.
#
#   bench/cold-wide.sh            ROUNDS (3) rounds; in each, thumbd then the floor, SECS (30) each
#
# thumbd: a release build (or THUMBD_BIN), --cache-bytes 256M, default workers (= cores); wrk
# -t2 -c4 (2 x cores) of misses.lua's cold mode, every request a never-seen source URL,
# format=jpeg, widths 200-399, the images in manifest order; its own CPU from /proc/PID/stat.
# The floor: bench/work/bin/floor (built as run.sh builds it) on as many threads, the same images
# in the same order and widths. Prints per round and the medians: images/s and CPU ms per image
# of each, and the ratios thumbd / floor. Exits non-zero if any request failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-30}
cores=$(nproc)
bench/corpus.sh --wide
CORPUS_DIR=bench/work/corpus-wide
# shellcheck source=bench/origin-setup.sh
source bench/origin-setup.sh
manifest=$CORPUS_DIR/manifest.tsv
tail -n +2 "$manifest" | cut -f3 >"$work/names.txt" # manifest order, as the floor reads it
floor=bench/work/bin/floor
if ! [ -x "$floor" ]; then
  mkdir -p bench/work/bin
  # shellcheck disable=SC2046  # pkg-config's flags are several words
  gcc -O2 -Wall -o "$floor" bench/floor/floor.c $(pkg-config --cflags --libs vips) -pthread
fi
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; cleanup' EXIT
start_thumbd "$bin" 18431 "$work/logs/cold-wide.log" --cache-bytes 256M
thumbd_pid=${pids[0]}
ticks() { # utime + stime of a pid, in clock ticks
  local stat
  stat=$(cat "/proc/$1/stat")
  stat=${stat##*) }
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}
hz=$(getconf CLK_TCK)
images=$(($(wc -l <"$manifest") - 1))
mp=$(tail -n +2 "$manifest" | awk -F'\t' '{s += $7; if (min == "" || $7 < min) min = $7; if ($7 > max) max = $7} END {printf "%.1f-%.1f MP, mean %.1f", min, max, s / NR}')
echo "corpus: $images images ($mp), $CORPUS_DIR; $cores cores, $SECS s per run, $ROUNDS rounds"
printf '%-6s %12s %12s %12s %12s %10s %10s\n' round thumbd_img/s floor_img/s thumbd_ms floor_ms img/s_ratio cpu_ratio
rows=()
failed=0
for r in $(seq "$ROUNDS"); do
  t0=$(ticks "$thumbd_pid")
  out=$(wrk -t2 -c$((2 * cores)) -d"${SECS}s" --timeout 30s -s bench/lua/misses.lua "http://127.0.0.1:18431" \
    -- cold "$work/names.txt" http://127.0.0.1:18181/src "wide-$$-$r" 2)
  t1=$(ticks "$thumbd_pid")
  json=$(sed -n 's/^WRK_JSON //p' <<<"$out")
  read -r requests rps errors < <(python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(j["requests"], j["rps"], j["err_status"] + j["err_connect"] + j["err_read"] + j["err_timeout"])' "$json")
  [ "$errors" = 0 ] || { echo "round $r: $errors failed thumbd requests" >&2; failed=1; }
  thumbd_ms=$(python3 -c "print(f'{($t1 - $t0) * 1000 / $hz / max($requests, 1):.1f}')")
  # libvips' warnings about the odd EXIF of some images go to a file, not between the rows.
  floor_json=$("$floor" --corpus "$CORPUS_DIR" --threads "$cores" --seconds "$SECS" 2>>"$work/logs/floor-wide.err") ||
    failed=1
  read -r floor_rps floor_ms < <(python3 -c 'import json, sys; j = json.loads(sys.argv[1]); print(j["rps"], j["cpu_ms_per_request"])' "$floor_json")
  row=$(python3 -c "print(f'$r {$rps:.2f} {$floor_rps:.2f} $thumbd_ms $floor_ms {$rps / $floor_rps:.3f} {$thumbd_ms / $floor_ms:.3f}')")
  rows+=("$row")
  # shellcheck disable=SC2086  # one field per column
  printf '%-6s %12s %12s %12s %12s %10s %10s\n' $row
done
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [line.split() for line in sys.stdin if line.strip()]
med = lambda i: statistics.median(float(r[i]) for r in rows)
print(f"median: thumbd {med(1):.2f} img/s at {med(3):.1f} ms, floor {med(2):.2f} img/s at {med(4):.1f} ms;"
      f" ratios (median of rounds) images/s {med(5):.2f}, CPU ms/image {med(6):.2f}")'
exit "$failed"

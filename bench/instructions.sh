#!/usr/bin/env bash
# The deterministic performance guard: the instructions thumbd's render pipeline executes
# (`thumbd-bench inprocess`: header check, decode, ICC handling, metadata removal, encode) against
# the plain libvips floor (bench/floor/floor.c: vips_thumbnail_buffer + vips_jpegsave_buffer) for
# the same requests, counted by callgrind, printed as a ratio. Seconds on this shared VM move by
# 10-15 % with the host; an instruction count does not, so this ratio can see a change of a
# percent that bench/run.sh's wall-clock cold miss (a guard at 0.85x the floor) cannot.
#
#   bench/instructions.sh      about 5 minutes of CPU (callgrind runs ~50x slower)
#
# The requests: IMAGES (6) images of bench/corpus (every fourth line of its manifest: JPEG and PNG,
# 2-24 MP) × PASSES (3), on one thread; request k takes image k mod IMAGES at width 200 + k, JPEG
# Q80 — the rule of the cold-miss load (lua/misses.lua), on a copy of the corpus whose manifest
# lists the images in file-name order, the order thumbd-bench reads them in, so both tools make
# the same (image, width) pairs. Each tool also runs with no request (--count 0): its start-up
# (process, libvips, reading the sources) is subtracted, so the ratio is of the requests alone;
# the totals with start-up are printed too.
#
# Both run with VIPS_NOVECTOR=1 (Orc's generated code crashes under valgrind), from copies without
# debug info (valgrind 3.19 cannot read the Swift binary's DWARF). thumbd-bench runs as thumbd does
# (its malloc settings, huge pages through GLIBC_TUNABLES), without the trim thread (timed work,
# not the pipeline's) and with Swift's deterministic hashing; the floor with glibc's defaults.
# Writes bench/results/instructions-<UTC>.md. THUMBD_BENCH=path skips the build; SKIP_INSTALL=1
# skips installing valgrind, gcc and binutils when missing.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
work="$here/work/instructions"
IMAGES="${IMAGES:-6}"
PASSES="${PASSES:-3}"
count=$((IMAGES * PASSES))

log() { printf '[instructions %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  missing=()
  command -v valgrind >/dev/null || missing+=(valgrind)
  command -v gcc >/dev/null || missing+=(gcc)
  command -v strip >/dev/null || missing+=(binutils)
  command -v pkg-config >/dev/null || missing+=(pkg-config)
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
"$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/corpus" "$here/results"

if [ -z "${THUMBD_BENCH:-}" ]; then
  log "swift build -c release --package-path bench (thumbd-bench)"
  swift build -c release --package-path "$here" --product thumbd-bench >"$work/build-bench.log" 2>&1 ||
    die "thumbd-bench did not build (see $work/build-bench.log)"
  THUMBD_BENCH="$(swift build -c release --package-path "$here" --show-bin-path)/thumbd-bench"
fi
strip -g -o "$work/thumbd-bench" "$THUMBD_BENCH"
log "gcc -O2 bench/floor/floor.c"
# shellcheck disable=SC2046  # pkg-config's flags are several words
gcc -O2 -Wall -o "$work/floor" "$here/floor/floor.c" $(pkg-config --cflags --libs vips) -pthread \
  >"$work/build-floor.log" 2>&1 || die "the floor did not build (see $work/build-floor.log)"

# The subset: every (images / IMAGES)-th manifest line, listed again in file-name order.
manifest="$here/corpus/manifest.tsv"
total=$(($(wc -l <"$manifest") - 1))
[ "$IMAGES" -ge 1 ] && [ "$IMAGES" -le "$total" ] || die "IMAGES must be 1..$total"
head -1 "$manifest" >"$work/corpus/manifest.tsv"
tail -n +2 "$manifest" | awk -v step=$((total / IMAGES)) -v n="$IMAGES" '(NR - 1) % step == 0 && ++k <= n' |
  sort -t$'\t' -k3,3 >>"$work/corpus/manifest.tsv"
while IFS=$'\t' read -r _ _ name _; do
  [ "$name" = file ] || ln -s "$here/corpus/$name" "$work/corpus/$name"
done <"$work/corpus/manifest.tsv"

# run TOOL COUNT: one callgrind run; prints the instructions it counted.
run() {
  local out="$work/callgrind.$1.$2" vars cmd
  # The environment goes to valgrind, which passes it on: under `valgrind env ...` only env
  # would be counted (valgrind does not follow an exec).
  if [ "$1" = floor ]; then
    vars=(VIPS_NOVECTOR=1)
    cmd=("$work/floor" --corpus "$work/corpus" --threads 1 --seconds 100000 --count "$2")
  else
    vars=(VIPS_NOVECTOR=1 THUMBD_MALLOC_TRIM_INTERVAL=0 GLIBC_TUNABLES=glibc.malloc.hugetlb=1
      SWIFT_DETERMINISTIC_HASHING=1)
    cmd=("$work/thumbd-bench" inprocess --corpus "$work/corpus" --threads 1 --widths 200-399 --format jpeg
      --seconds 100000 --count "$2")
  fi
  log "callgrind: $1, $2 requests"
  env "${vars[@]}" valgrind --tool=callgrind --callgrind-out-file="$out" "${cmd[@]}" >"$out.json" 2>"$out.err" ||
    die "$1 --count $2 failed under callgrind (see $out.err)"
  grep -q "\"requests\": $2," "$out.json" || die "$1 did not make $2 images (see $out.json)"
  awk '$1 == "summary:" || $1 == "totals:" {print $2; exit}' "$out"
}
floor0=$(run floor 0)
floor1=$(run floor "$count")
thumbd0=$(run thumbd-bench 0)
thumbd1=$(run thumbd-bench "$count")

names=$(tail -n +2 "$work/corpus/manifest.tsv" | awk -F'\t' '{printf "%s%s (%s, %s MP)", sep, $3, $4, $7; sep = ", "}')
report="$here/results/instructions-$(date -u +%Y%m%dT%H%M%SZ).md"
python3 - "$floor0" "$floor1" "$thumbd0" "$thumbd1" "$count" "$IMAGES" "$PASSES" "$names" \
  "$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  "$(pkg-config --modversion vips)" "$(valgrind --version)" >"$report" <<'PY'
import sys, time
f0, f1, t0, t1, count = (int(x) for x in sys.argv[1:6])
images, passes, names, commit, vips, valgrind = sys.argv[6:12]
g = lambda n: f"{n / 1e9:.3f} G"
per = lambda n: f"{n / count / 1e6:.1f} M"
print(f"# Instructions: thumbd's pipeline against the plain libvips floor\n")
print(f"- {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit `{commit}`, libvips {vips}, {valgrind}; "
      f"`bench/instructions.sh`")
print(f"- {count} requests on one thread: {images} images × {passes} widths each (request k: image k mod {images}, "
      f"width 200 + k, JPEG Q80): {names}\n")
print("| | start-up (no request) | with the requests | the requests alone | per request |")
print("|---|---|---|---|---|")
print(f"| floor (`bench/floor/floor.c`) | {g(f0)} | {g(f1)} | {g(f1 - f0)} | {per(f1 - f0)} |")
print(f"| thumbd's pipeline (`thumbd-bench inprocess`) | {g(t0)} | {g(t1)} | {g(t1 - t0)} | {per(t1 - t0)} |")
print(f"| **thumbd ÷ floor** | | {t1 / f1:.3f} | **{(t1 - t0) / (f1 - f0):.3f}** | |")
PY
cat "$report"
log "report: $report"

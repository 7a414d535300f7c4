#!/usr/bin/env bash
# The decode-memory model against measurement, one fresh process per image (thumbd-bench memory):
# for every image of bench/corpus (or the directory given), a first size at WIDTH (default 300),
# the reusable-copy decode and a cut from that copy; prints a table of estimate, measured RSS rise
# and libvips' tracked high-water, and fails when any estimate is more than 10 % under the measured rise.
# Short: about a second per image, after a release build of thumbd-bench (bench/Package.swift;
# THUMBD_BENCH=path runs that binary instead). Usage: bench/decode-memory.sh [DIR] [WIDTH]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/glibc-tunables.sh
source "$here/../scripts/glibc-tunables.sh"   # thumbd's malloc settings: the RSS measured is thumbd's
corpus="${1:-$here/corpus}"
width="${2:-300}"
if [ -z "${THUMBD_BENCH:-}" ]; then
  mkdir -p "$here/work"
  swift build -c release --package-path "$here" --product thumbd-bench >"$here/work/build-bench.log" 2>&1 ||
    { echo "thumbd-bench did not build (see $here/work/build-bench.log)" >&2; exit 2; }
  THUMBD_BENCH="$(swift build -c release --package-path "$here" --show-bin-path)/thumbd-bench"
fi
bin=$THUMBD_BENCH
[ -x "$bin" ] || { echo "no thumbd-bench at $bin" >&2; exit 2; }
printf '| image | format | size | interlaced | path | estimate MiB | measured RSS rise MiB | libvips tracked MiB | estimate / measured |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
worst=99
for file in "$corpus"/*.jpg "$corpus"/*.jpeg "$corpus"/*.png "$corpus"/*.webp; do
  [ -f "$file" ] || continue
  for path in first copy cut; do
    line="$(GLIBC_TUNABLES="$thumbd_glibc_tunables" "$bin" memory "$file" --width "$width" --path "$path")"
    python3 - "$line" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
mib = lambda b: b / 1048576
print(f"| {r['file']} | {r['format']} | {r['width']}×{r['height']} | {'yes' if r['interlaced'] else 'no'} | {r['path']} "
      f"| {mib(r['estimate_bytes']):.1f} | {mib(r['rss_rise_bytes']):.1f} | {mib(r['vips_tracked_high_water_bytes']):.1f} | {r['ratio']:.2f} |")
PY
    ratio="$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["ratio"])' "$line")"
    worst="$(python3 -c "print(min($worst, $ratio))")"
  done
done
echo
echo "lowest estimate / measured: $worst (must be ≥ 0.90)"
python3 -c "import sys; sys.exit(0 if $worst >= 0.9 else 1)"

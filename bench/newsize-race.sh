#!/usr/bin/env bash
# The load that found liborc's code-allocator race (docs/architecture.md, "Orc stays on"): one
# thumbd, repeated minutes of 10 s of cold misses then 50 s of new sizes of those new sources
# (first fetches running while other widths are cut from decoded copies), every minute on fresh
# source URLs. Reports whether thumbd survived and how many 200s it answered; exit status 1 if it
# died (its first non-log line, e.g. a glibc abort, is printed; under ASan see $work/asan.*).
#   bench/newsize-race.sh [SECONDS] [thumbd flags...]     default 1500 s
#   ASAN=1 bench/newsize-race.sh 1500                      a release build with AddressSanitizer
# THUMBD_BIN=path runs that binary instead (ASAN=1 then only sets ASAN_OPTIONS). Setup:
# bench/malloc-setup.sh (nginx origin on 18181).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1500}
[ $# -gt 0 ] && shift
if [ "${ASAN:-}" = 1 ] && [ -z "${THUMBD_BIN:-}" ]; then
  swift build -c release --sanitize=address --scratch-path bench/work/asan --product thumbd \
    >bench/work/asan-build.log 2>&1
  THUMBD_BIN=bench/work/asan/release/thumbd
fi
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
log="$work/logs/newsize-race.log"
env_args=()
[ "${ASAN:-}" = 1 ] && env_args=(ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:log_path=$PWD/$work/asan")
env "${env_args[@]}" "$bin" --allow-loopback-sources --port 18182 --cache-bytes 256M "$@" 2>"$log" &
pid=$!
for _ in $(seq 100); do curl -sf http://127.0.0.1:18182/livez >/dev/null && break; sleep 0.1; done
for i in $(seq $((secs / 60))); do
  for mode in cold newsize; do
    [ "$mode" = cold ] && d=10 || d=50
    wrk -t2 -c4 -d"${d}s" --timeout 30s -s bench/lua/misses.lua http://127.0.0.1:18182 \
      -- "$mode" "$work/names.txt" http://127.0.0.1:18181/src "race-$i-$$" 2 >/dev/null || true
  done
  kill -0 "$pid" 2>/dev/null || break
done
ok=$(grep -c 'route=/thumb status=200' "$log" || true)
other=$(grep 'route=/thumb' "$log" | grep -vc 'status=200' || true)
if kill -0 "$pid" 2>/dev/null; then
  echo "alive after $secs s: $ok answered 200, $other other statuses"
else
  echo "DIED after $ok answers of 200: $(grep -v '^ts=' "$log" | head -1)"
  exit 1
fi

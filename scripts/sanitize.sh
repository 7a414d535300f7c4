#!/usr/bin/env bash
# Builds and runs the whole test suite under AddressSanitizer (with LeakSanitizer) and then
# ThreadSanitizer, each in its own build directory (.build/asan, .build/tsan) so the normal
# .build/debug is untouched. Fails on any sanitizer report, even when every test passed.
#   scripts/sanitize.sh            both
#   scripts/sanitize.sh address    one of them (address | thread)
# Suppressions, each with its reason: scripts/sanitizers/*.supp. Logs: .build/sanitize-*.log.
# Runs under `nice -n 19` (SANITIZE_NICE to change): the machine is shared. Timings: README.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh python3 nodejs
nice="nice -n ${SANITIZE_NICE:-19}"
here="$(pwd)"
# Symbolized stacks in reports; a leak, a race or a memory error fails the run (exit 66, not the
# test runner's status alone, which a report at exit would not change).
export ASAN_OPTIONS="detect_leaks=1:exitcode=66:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$here/scripts/sanitizers/lsan.supp:print_suppressions=1"
export TSAN_OPTIONS="suppressions=$here/scripts/sanitizers/tsan.supp:exitcode=66:halt_on_error=0:second_deadlock_stack=1"
export ASAN_SYMBOLIZER_PATH="${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer || true)}"

status=0
for sanitizer in "${@:-address thread}"; do
  for s in $sanitizer; do
    case "$s" in
      address) dir=.build/asan ;;
      thread) dir=.build/tsan ;;
      *) echo "sanitize: unknown sanitizer $s (address | thread)" >&2; exit 2 ;;
    esac
    log=".build/sanitize-$s.log"
    start=$(date +%s)
    echo "sanitize: $s: building in $dir" >&2
    $nice swift build --build-tests --sanitize="$s" --scratch-path "$dir" >"$log" 2>&1 \
      || { tail -40 "$log" >&2; echo "sanitize: $s: build failed (log: $log)" >&2; exit 1; }
    built=$(date +%s)
    echo "sanitize: $s: running the suite" >&2
    set +e
    $nice swift test --skip-build --sanitize="$s" --scratch-path "$dir" >>"$log" 2>&1
    rc=$?
    set -e
    end=$(date +%s)
    reports=$(grep -cE "^(==[0-9]+==ERROR|WARNING: ThreadSanitizer|SUMMARY: (Address|Thread|Leak)Sanitizer)" "$log" || true)
    summary=$(grep -E "Test run with|Executed [0-9]+ tests" "$log" | tail -1)
    echo "sanitize: $s: build $((built - start)) s, suite $((end - built)) s; exit $rc; $reports report line(s); $summary" >&2
    if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then
      grep -nE "ERROR|WARNING: ThreadSanitizer|SUMMARY|✘" "$log" | head -40 >&2
      echo "sanitize: $s: NOT clean (log: $log)" >&2
      status=1
    fi
  done
done
exit $status

#!/usr/bin/env bash
# Builds and runs the whole test suite under AddressSanitizer (with LeakSanitizer) and then
# ThreadSanitizer, each in its own build directory (.build/asan, .build/tsan) so the normal
# .build/debug is untouched. Fails on any sanitizer report, even when every test passed.
# scripts/test.sh (so CI) runs it after the normal suite.
#   scripts/sanitize.sh            both
#   scripts/sanitize.sh address    one of them (address | thread)
# Suppressions, each with its reason: scripts/sanitizers/*.supp. Logs: .build/sanitize-*.log.
# On a shared machine run it under `nice -n 5`, not lower: the suite's bounded waits are
# generous, but a process niced to 19 beside busy neighbours gets almost no CPU at all.
set -euo pipefail
cd "$(dirname "$0")/.."
# The same packages as scripts/test.sh: the suite needs them whichever build runs it.
./scripts/setup.sh python3 nodejs prometheus
here="$(pwd)"
# Symbolized stacks in reports, by the toolchain's own llvm-symbolizer (it reads what its
# compiler wrote); a leak, a race or a memory error fails the run (exit 66, not the test
# runner's status alone, which a report at exit would not change).
symbolizer="$(dirname "$(readlink -f "$(command -v swift)")")/llvm-symbolizer"
[ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"
export ASAN_OPTIONS="suppressions=$here/scripts/sanitizers/asan.supp:detect_leaks=1:exitcode=66:abort_on_error=0:external_symbolizer_path=$symbolizer"
export LSAN_OPTIONS="suppressions=$here/scripts/sanitizers/lsan.supp:print_suppressions=1"
export TSAN_OPTIONS="suppressions=$here/scripts/sanitizers/tsan.supp:print_suppressions=1:exitcode=66:halt_on_error=0:second_deadlock_stack=1:external_symbolizer_path=$symbolizer"

# glib's slice allocator recycles memory without malloc/free, which the sanitizers would take
# for a use after free (ASan) or a race between an old and a new object (TSan).
export G_SLICE=always-malloc

mkdir -p .build  # the logs' directory; absent in a fresh clone until the first build
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
    swift build --build-tests --sanitize="$s" --scratch-path "$dir" >"$log" 2>&1 \
      || { tail -40 "$log" >&2; echo "sanitize: $s: build failed (log: $log)" >&2; exit 1; }
    built=$(date +%s)
    echo "sanitize: $s: running the suite" >&2
    set +e
    swift test --skip-build --sanitize="$s" --scratch-path "$dir" >>"$log" 2>&1
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

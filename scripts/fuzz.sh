#!/usr/bin/env bash
# Builds (if needed) and runs one libFuzzer target of fuzz/ for SECONDS (default 60).
#   scripts/fuzz.sh TARGET [SECONDS] [extra libFuzzer flags…]
# TARGET: request-parser | source-url | address | accept (or the product name, FuzzSourceURL …).
# The seed corpus is fuzz/corpus/TARGET (committed); what the run discovers goes to
# .build/fuzz-corpus/TARGET (not committed), crashes and hangs to .build/fuzz-artifacts/TARGET.
# Runs under `nice -n 19` (FUZZ_NICE to change): the machine is shared. Exit status: libFuzzer's
# (0 when nothing was found).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: scripts/fuzz.sh request-parser|source-url|address|accept [SECONDS] [libFuzzer flags…]}"
seconds="${2:-60}"
shift $(( $# >= 2 ? 2 : 1 ))
case "$target" in
  request-parser|FuzzRequestParser) name=request-parser product=FuzzRequestParser ;;
  source-url|FuzzSourceURL) name=source-url product=FuzzSourceURL ;;
  address|FuzzAddress) name=address product=FuzzAddress ;;
  accept|FuzzAccept) name=accept product=FuzzAccept ;;
  *) echo "fuzz: unknown target $target" >&2; exit 2 ;;
esac
./scripts/setup.sh
nice="nice -n ${FUZZ_NICE:-19}"
# Release with testability: optimised like the service, and `@testable import` reaches the
# internal parsers (QueryString, AcceptNegotiation). `--sanitize` covers only the root package
# (fuzz/: it also makes SwiftPM leave `main` to libFuzzer), so the same sanitizers go through
# -Xswiftc as well: without coverage of the main package's modules libFuzzer searches blind.
# --disable-dead-strip: the linker's --gc-sections would drop the coverage counters.
$nice swift build --package-path fuzz --scratch-path .build/fuzz -c release \
  --sanitize=fuzzer --sanitize=address --disable-dead-strip -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing --product "$product" >&2
binary="$(swift build --package-path fuzz --scratch-path .build/fuzz -c release \
  --sanitize=fuzzer --sanitize=address --disable-dead-strip -Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing --show-bin-path)/$product"
corpus=".build/fuzz-corpus/$name"
artifacts=".build/fuzz-artifacts/$name"
mkdir -p "$corpus" "$artifacts"
# -timeout: every parser is linear in a few KB, so 10 s is a hang even at nice 19 on a busy
# machine (1 s gave a false one under load);
# -max_len: the longest URL is 4096 bytes, a query a little more.
# Swift's own crash backtracer would read the crashed process's memory, which ASan reports as a
# second, unrelated error; libFuzzer prints the stack and saves the input itself.
export SWIFT_BACKTRACE=enable=no
exec $nice "$binary" "$corpus" "fuzz/corpus/$name" -max_total_time="$seconds" -timeout=10 -max_len=8192 \
  -artifact_prefix="$artifacts/" -print_final_stats=1 "$@"

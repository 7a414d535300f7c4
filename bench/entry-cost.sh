#!/usr/bin/env bash
# What a cached thumbnail really costs in memory, against what the cache charges for it.
#
# One thumbd (--cache-bytes 2G, so nothing is evicted) makes FIRST (2000) and then MORE (6000)
# tiny variants of one source (bench/entry-cost-client.py: w 16 and up, q 30-99, format=auto, so
# the target memo holds none of them). After each batch, once the trim has run (3 s), it reads VmRSS
# and the cache's charge for variants (/metrics: thumbd_cache_bytes{kind="variant"}). The second
# batch less the first, per entry: resident bytes against charged bytes, and their ratio. A ratio
# near 1 means `--cache-bytes` bounds what small thumbnails hold.
#
#   bench/entry-cost.sh                  # release build of the tree
#   THUMBD_BIN=path bench/entry-cost.sh  # a given binary
#
# Setup (corpus, nginx origin on 127.0.0.1:18181): bench/malloc-setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST="${FIRST:-2000}"
MORE="${MORE:-6000}"
PORT="${PORT:-18195}"
# shellcheck source=bench/malloc-setup.sh
source bench/malloc-setup.sh
name=desktop-base_org.debian.desktop_previews_fullscreenpreview.jpg
[ -f "bench/corpus/$name" ] || { echo "entry-cost: bench/corpus/$name is missing" >&2; exit 1; }
source_url="http://127.0.0.1:18181/src/$name"
"$bin" --allow-loopback-sources --port "$PORT" --cache-bytes 2G 2>"$work/logs/entry-cost.log" &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/livez" >/dev/null && break; sleep 0.1; done
# Two sizes first: the original is fetched and cached, and the second makes the decoded copy
# every later size is cut from.
for w in 600 601; do curl -sf -o /dev/null "http://127.0.0.1:$PORT/thumb?url=$source_url&w=$w&format=auto"; done

metric() { curl -sf "http://127.0.0.1:$PORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
batch() { # FIRST COUNT -> prints "entries charged_bytes rss_bytes"
  python3 bench/entry-cost-client.py "$PORT" "$source_url" "$1" "$2"
  sleep 3
  echo "$(metric 'thumbd_cache_entries{kind="variant"}') $(metric 'thumbd_cache_bytes{kind="variant"}') $(($(rss_kb) * 1024))"
}
read -r e1 c1 r1 < <(batch 0 "$FIRST")
read -r e2 c2 r2 < <(batch "$FIRST" "$MORE")
python3 - "$e1" "$c1" "$r1" "$e2" "$c2" "$r2" <<'PY'
import sys
e1, c1, r1, e2, c2, r2 = (float(v) for v in sys.argv[1:])
n = e2 - e1
if n <= 0:
    sys.exit(f"entry-cost: no new variants cached ({e1:.0f} -> {e2:.0f})")
charged, resident = (c2 - c1) / n, (r2 - r1) / n
print(f"variants cached: {e1:.0f} -> {e2:.0f}; charged {c1 / 1048576:.1f} -> {c2 / 1048576:.1f} MiB; "
      f"RSS {r1 / 1048576:.1f} -> {r2 / 1048576:.1f} MiB")
print(f"per variant: charged {charged:.0f} B, resident {resident:.0f} B, resident / charged {resident / charged:.2f}")
PY

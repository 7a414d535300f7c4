#!/usr/bin/env bash
# The memory promise of issue 8 under its worst load: COUNT (default 66) clients at once, each
# asking for a thumbnail of a *different* large progressive JPEG (5200x5200, Q95, ~25 MB, under
# the 32 MiB source cap and the 75 MP pixel cap), with --cache-bytes 256M --work-bytes 512M, while
# another client asks every 100 ms for a thumbnail that was a cache hit before the burst; then
# MIX (default 200) clients at once on a mix of the corpus (every image, five widths, three
# formats), the hot thumbnail still asked for.
#
# Starts its own nginx origin (127.0.0.1:$NGINX_PORT, serving bench/work/burst/) and thumbd
# (127.0.0.1:$THUMBD_PORT), stops both on exit. Reports: every answer's status (200, or 503 with
# Retry-After; nothing else allowed), thumbd's peak RSS (VmHWM) against cache + work + 80 MiB,
# the hot thumbnail's answers during both, and what thumbd charged at its sampled RSS peak. Writes bench/results/burst-<UTC>.md.
#
# The images are made once with vips from the corpus JPEGs (cycled; flipped and cropped so that
# no two are the same) into bench/work/burst/ and kept there (gitignored).
#
#   bench/burst.sh                     # full: 66 images (~1.6 GB on disk, a few minutes to make once)
#   COUNT=3 bench/burst.sh             # smoke run: the figures mean nothing
#   THUMBD_BIN=.build/debug/thumbd ... # use an already built binary instead of a release build
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/burst-run"
images="$here/work/burst"
COUNT="${COUNT:-66}"
MIX="${MIX:-200}"
SIDE="${SIDE:-5200}"
CACHE_BYTES="${CACHE_BYTES:-256M}"
WORK_BYTES="${WORK_BYTES:-512M}"
NGINX_PORT="${NGINX_PORT:-18093}"
THUMBD_PORT="${THUMBD_PORT:-18094}"
THUMBD_BIN="${THUMBD_BIN:-}"

name=burst
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

command -v vips >/dev/null || die "needs vips (libvips-tools)"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$nginx_bin" ] || die "needs nginx (nginx-light)"
[ -f "$corpus/manifest.tsv" ] || "$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$images"

# ---------------------------------------------------------------- images (made once)
mapfile -t sources < <(printf '%s\n' "$corpus"/*.jpg | sort)
for i in $(seq 0 $((COUNT - 1))); do
  out="$images/burst-$i.jpg"
  [ -s "$out" ] && continue
  src="${sources[$((i % ${#sources[@]}))]}"
  variant=$((i / ${#sources[@]}))
  log "making $out from $(basename "$src") (variant $variant)"
  # Crop a little off (differently per variant), flip every other variant, stretch to
  # SIDE x SIDE, add a little colour noise (sigma 10 per band: a stretched photo alone compresses
  # to a few MB, and the load is about 25-MB sources), save as a progressive Q95 JPEG.
  w="$(vipsheader -f width "$src")"; h="$(vipsheader -f height "$src")"
  cut=$((variant * 16))
  vips crop "$src" "$work/c.v" "$cut" "$cut" $((w - 2 * cut)) $((h - 2 * cut))
  if [ $((variant % 2)) = 1 ]; then vips flip "$work/c.v" "$work/f.v" horizontal; else mv "$work/c.v" "$work/f.v"; fi
  cw=$((w - 2 * cut)); ch=$((h - 2 * cut))
  vips resize "$work/f.v" "$work/r.v" "$(python3 -c "print($SIDE / $cw)")" --vscale "$(python3 -c "print($SIDE / $ch)")"
  for b in 1 2 3; do vips gaussnoise "$work/n$b.v" "$SIDE" "$SIDE" --sigma 10 --mean 0; done
  vips bandjoin "$work/n1.v $work/n2.v $work/n3.v" "$work/n.v"
  vips add "$work/r.v" "$work/n.v" "$work/s.v"
  vips cast "$work/s.v" "$work/u.v" uchar
  vips copy "$work/u.v" "${out}[Q=95,interlace,strip]"
  rm -f "$work"/*.v
done
total=0
for i in $(seq 0 $((COUNT - 1))); do total=$((total + $(stat -c %s "$images/burst-$i.jpg"))); done
log "$COUNT images, $((total / 1048576)) MiB"

# ---------------------------------------------------------------- nginx + thumbd
user_line=""
[ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
hot_src="$(printf '%s\n' "$corpus"/*.jpg | sort | tail -1)"
cat >"$work/nginx/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  types { image/jpeg jpg jpeg; }
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  access_log off;
  sendfile on;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location /burst/ { alias $images/; }
    location /hot/ { alias $corpus/; }
  }
}
EOF
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=("$!")

if [ -z "$THUMBD_BIN" ]; then
  log "building thumbd (release)"
  (cd "$root" && swift build -c release --product thumbd >"$work/build.log" 2>&1) || die "build failed (see $work/build.log)"
  THUMBD_BIN="$root/.build/release/thumbd"
fi
GLIBC_TUNABLES="$thumbd_glibc_tunables" "$THUMBD_BIN" --port "$THUMBD_PORT" --cache-bytes "$CACHE_BYTES" --work-bytes "$WORK_BYTES" \
  --allow-loopback-sources --log-requests false 2>"$work/thumbd.log" &
thumbd_pid=$!
pids+=("$thumbd_pid")
for _ in $(seq 100); do curl -fsS -o /dev/null "http://127.0.0.1:$THUMBD_PORT/healthz" 2>/dev/null && break; sleep 0.1; done

enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
origin="http://127.0.0.1:$NGINX_PORT"
hot="http://127.0.0.1:$THUMBD_PORT/thumb?url=$(enc "$origin/hot/$(basename "$hot_src")")&w=200"
curl -fsS -o /dev/null "$hot" || die "the hot thumbnail failed (see $work/thumbd.log)"
curl -fsS -o /dev/null "$hot"
base_kb="$(awk '$1 == "VmRSS:" {print $2}' "/proc/$thumbd_pid/status")"

# ---------------------------------------------------------------- the burst
log "burst: $COUNT clients at once"
clients=()   # waited for, never killed: each ends by its own -m timeout
: >"$work/hot.txt"
(
  while [ ! -f "$work/burst.done" ]; do
    curl -sS -o /dev/null -w '%{http_code} %{time_total}\n' -m 10 "$hot" >>"$work/hot.txt" 2>/dev/null || echo "000 10" >>"$work/hot.txt"
    sleep 0.1
  done
) &
hot_pid=$!
# What thumbd accounts for, next to its RSS, every 200 ms: where a peak comes from.
(
  echo -e "t\trss\twork\tcache\tvips" >"$work/samples.tsv"
  while [ ! -f "$work/burst.done" ]; do
    rss="$(awk '$1 == "VmRSS:" {print $2 * 1024}' "/proc/$thumbd_pid/status" 2>/dev/null)"
    curl -s -m 2 "http://127.0.0.1:$THUMBD_PORT/metrics" | awk -v t="$(date +%s.%N)" -v rss="$rss" '
      $1 == "thumbd_work_memory_bytes" {w = $2}
      $1 ~ /^thumbd_cache_bytes\{/ {c += $2}
      $1 == "thumbd_vips_memory_bytes" {v = $2}
      END {printf "%s\t%s\t%d\t%d\t%d\n", t, rss, w, c, v}' >>"$work/samples.tsv"
    sleep 0.2
  done
) &
sampler_pid=$!
for i in $(seq 0 $((COUNT - 1))); do
  curl -sS -o /dev/null -D "$work/h-$i.txt" -w '%{http_code} %{time_total}\n' -m 120 \
    "http://127.0.0.1:$THUMBD_PORT/thumb?url=$(enc "$origin/burst/burst-$i.jpg")&w=300" >"$work/s-$i.txt" 2>&1 &
  clients+=("$!")
done
for p in "${clients[@]}"; do wait "$p" 2>/dev/null || true; done
burst_peak_kb="$(awk '$1 == "VmHWM:" {print $2}' "/proc/$thumbd_pid/status")"

# Then MIX clients at once on a mix of the corpus: every image, five widths, some formats (the
# same request several times over: coalesced), the hot thumbnail still asked for meanwhile.
log "mix: $MIX clients at once on the corpus"
mapfile -t corpus_files < <(cd "$corpus" && find . -maxdepth 1 \( -name '*.jpg' -o -name '*.png' \) -printf '%f\n' | sort)
widths=(160 240 320 480 640)
formats=("" "&format=webp" "" "&format=png" "")
clients=()
for i in $(seq 0 $((MIX - 1))); do
  f="${corpus_files[$((i % ${#corpus_files[@]}))]}"
  k=$(( (i / ${#corpus_files[@]}) % 5 ))
  curl -sS -o /dev/null -D "$work/mh-$i.txt" -w '%{http_code} %{time_total}\n' -m 120 \
    "http://127.0.0.1:$THUMBD_PORT/thumb?url=$(enc "$origin/hot/$f")&w=${widths[$k]}${formats[$k]}" \
    >"$work/m-$i.txt" 2>&1 &
  clients+=("$!")
done
for p in "${clients[@]}"; do wait "$p" 2>/dev/null || true; done
touch "$work/burst.done"
wait "$hot_pid" "$sampler_pid" 2>/dev/null || true
peak_kb="$(awk '$1 == "VmHWM:" {print $2}' "/proc/$thumbd_pid/status")"

# ---------------------------------------------------------------- report
mkdir -p "$here/results"
report="$here/results/burst-$(date -u +%Y%m%dT%H%M%SZ).md"
verdict=0
python3 - "$work" "$COUNT" "$peak_kb" "$base_kb" "$(bytes "$CACHE_BYTES")" "$(bytes "$WORK_BYTES")" "$total" "$MIX" "$burst_peak_kb" >"$report" <<'PY' || verdict=$?
import glob, os, sys
work, count, peak_kb, base_kb, cache, budget, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
mix, burst_peak_kb = int(sys.argv[8]), int(sys.argv[9])
bad = 0
def answers(prefix, n):
    global bad
    statuses = {}
    for i in range(n):
        line = open(f"{work}/{prefix}-{i}.txt").read().split()
        status = line[0] if line else "none"
        path = f"{work}/{prefix[0]}h-{i}.txt" if prefix == "m" else f"{work}/h-{i}.txt"
        headers = open(path).read().lower() if os.path.exists(path) else ""
        if status == "503" and "retry-after:" not in headers: status = "503 without Retry-After"
        statuses[status] = statuses.get(status, 0) + 1
        if status not in ("200", "503"): bad += 1
    return ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
burst_answers = answers("s", count)
mix_answers = answers("m", mix)
hot = [l.split() for l in open(f"{work}/hot.txt") if l.strip()]
hot_ok = sum(1 for s, t in hot if s == "200" and float(t) <= 1.0)
limit = cache + budget + (80 << 20)
mib = lambda b: b / 1048576
print(f"# thumbd burst: {count} different progressive JPEGs at once, then {mix} clients on the corpus\n")
print(f"- images: {count}, {mib(total):.0f} MiB in all; `--cache-bytes {mib(cache):.0f}M --work-bytes {mib(budget):.0f}M`")
print(f"- answers, the burst: {burst_answers}; then {mix} clients at once on the corpus: {mix_answers} "
      f"(not 200/503 in all: {bad})")
print(f"- peak RSS (VmHWM): **{peak_kb / 1024:.0f} MiB** over both (after the burst: {burst_peak_kb / 1024:.0f} MiB) "
      f"against cache + work + 80 MiB = {mib(limit):.0f} MiB "
      f"({'PASS' if peak_kb * 1024 <= limit else 'FAIL'}); RSS before the burst {base_kb / 1024:.0f} MiB")
print(f"- hot thumbnail every 100 ms during both loads: {hot_ok} of {len(hot)} answered 200 within 1 s")
rows = [l.split("\t") for l in open(f"{work}/samples.tsv").read().splitlines()[1:] if l.count("\t") == 4]
rows = [[float(x or 0) for x in r] for r in rows]
if rows:
    top = max(rows, key=lambda r: r[1])
    print(f"- at the sampled RSS peak ({mib(top[1]):.0f} MiB, every 200 ms): work memory charged "
          f"{mib(top[2]):.0f} MiB, cache {mib(top[3]):.0f} MiB, libvips tracked {mib(top[4]):.0f} MiB; "
          f"highest work charge {mib(max(r[2] for r in rows)):.0f} MiB")
sys.exit(0 if bad == 0 and peak_kb * 1024 <= limit and hot_ok == len(hot) else 1)
PY
cat "$report"
exit "$verdict"

#!/usr/bin/env bash
# thumbd cache-policy replay (issue 8, "Hot thumbnails survive a burst of new sources"): a
# Zipf-like trace (s = 1.0) over the corpus at 4 widths, replayed against a fresh release thumbd
# with a small --cache-bytes (the working set does not fit), alone and then with a one-pass crawl
# of never-seen sources mixed in (one request in CRAWL_EVERY). Reports both hit rates (X-Cache),
# their ratio (target >= 0.9) and plain LRU's, simulated over the same requests with the entry
# sizes thumbd answered (thumbd has no plain-LRU switch). Report: bench/results/replay-<UTC>.md;
# exit 1 below target.
#
#   bench/replay.sh                   REQUESTS=10000 trace requests per run (about 15 minutes on a quiet machine)
#   REQUESTS=1500 bench/replay.sh     a smoke run (a few minutes)
#
# Knobs: REQUESTS, CRAWL_EVERY (3), CACHE_BYTES (48M), WORK_BYTES (384M), CLIENTS (2), WARMUP
# (0.2: share of the trace not counted), THUMBD_PORT (18130), NGINX_PORT (18131), CORPUS,
# THUMBD_BIN (skip the build), SKIP_INSTALL, BUILD_NICE (19).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/replay"
REQUESTS="${REQUESTS:-10000}"
CRAWL_EVERY="${CRAWL_EVERY:-3}"
CACHE_BYTES="${CACHE_BYTES:-48M}"
WORK_BYTES="${WORK_BYTES:-384M}"
CLIENTS="${CLIENTS:-2}"
WARMUP="${WARMUP:-0.2}"
THUMBD_PORT="${THUMBD_PORT:-18130}"
NGINX_PORT="${NGINX_PORT:-18131}"
THUMBD_BIN="${THUMBD_BIN:-}"
BUILD_NICE="${BUILD_NICE:-19}"
ADMIN_TOKEN="replay-admin-token-0123456789"

name=replay
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

bench_install
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -f "$corpus/manifest.tsv" ] || "$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$here/results"

bench_build

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$THUMBD_PORT" "$NGINX_PORT"; do port_free "$port" || die "port $port is in use"; done
wait_http() {
  for _ in $(seq 100); do curl -fsS -o /dev/null "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}

user_line=""
[ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
cat >"$work/nginx/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
  types { image/jpeg jpg jpeg; image/png png; }
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  access_log off;
  sendfile on;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location /src/ { alias $corpus/; }
  }
}
EOF
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=("$!")
awk -F'\t' 'NR > 1 {print $3}' "$corpus/manifest.tsv" >"$work/names.txt"
wait_http "http://127.0.0.1:$NGINX_PORT/src/$(head -1 "$work/names.txt")" || die "nginx did not come up"

flags=(--port "$THUMBD_PORT" --cache-bytes "$CACHE_BYTES" --work-bytes "$WORK_BYTES" --allow-loopback-sources
  --admin-token "$ADMIN_TOKEN" --log-requests false)
run() {   # run NAME CRAWL_EVERY: a fresh thumbd, the replay, thumbd stopped
  GLIBC_TUNABLES="$thumbd_glibc_tunables" "$work/thumbd" "${flags[@]}" 2>"$work/thumbd-$1.log" >/dev/null &
  local pid=$!
  pids+=("$pid")
  wait_http "http://127.0.0.1:$THUMBD_PORT/healthz" || die "thumbd did not come up (see $work/thumbd-$1.log)"
  log "run $1: $REQUESTS trace requests, crawl every ${2} (0: none)"
  python3 "$here/soak/replay.py" run --port "$THUMBD_PORT" --origin "http://127.0.0.1:$NGINX_PORT/src" \
    --names "$work/names.txt" --requests "$REQUESTS" --crawl-every "$2" --clients "$CLIENTS" \
    --admin-token "$ADMIN_TOKEN" --out "$work/$1.json"
  stop_pid "$pid"
}
run plain 0
run crawl "$CRAWL_EVERY"

report="$here/results/replay-$(date -u +%Y%m%dT%H%M%SZ).md"
commit="$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
python3 "$here/soak/replay.py" report --budget "$(bytes "$CACHE_BYTES")" --manifest "$corpus/manifest.tsv" \
  --warmup "$WARMUP" --out "$report" \
  --describe "commit \`$commit\`, $(nproc) cores; thumbd \`--cache-bytes $CACHE_BYTES --work-bytes $WORK_BYTES\`, $CLIENTS client threads" \
  "$work/plain.json" "$work/crawl.json"

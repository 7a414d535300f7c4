#!/usr/bin/env bash
# thumbd soak: SOAK_SECONDS (default 600) of mixed load — hits, new sizes, cold misses, new sizes
# of a never-seen source racing its first size (three widths at once), HEAD, If-None-Match
# revalidations, POST /prefetch, only-if-cached, malformed requests, slow clients — against a
# good origin (nginx serving bench/corpus) and misbehaving origins (bench/soak/origin.py: slow
# trickle, stall, reset mid-body, 5xx, wrong Content-Length, truncated images, redirect loop,
# flapping up/down), each on its own port (its own fetch slots and circuit breaker). Checks: no
# crash, no 500, every request answered within its deadline with the expected status
# (problem+json), RSS after warm-up flat (< 50 MiB growth), peak RSS <= cache + work + 80 MiB.
# Report: bench/results/soak-<UTC>.md; exit status 1 when a check fails.
#
#   bench/soak.sh                      the full run (about 11 minutes with an up-to-date build)
#   SOAK_SECONDS=45 bench/soak.sh      a smoke run (about 1.5 minutes)
#
# Knobs: SOAK_SECONDS, THREADS (6), CACHE_BYTES (128M), WORK_BYTES (384M), FETCH_TIMEOUT (6),
# HEAD_TIMEOUT (4), HIT_DEADLINE (2), WORK_MARGIN (20), THUMBD_PORT (18110), NGINX_PORT (18111),
# FAULT_BASE_PORT (18120, uses 8 ports), CORPUS (bench/corpus), THUMBD_BIN (skip the build),
# SKIP_INSTALL, BUILD_NICE (19: the niceness of the release build).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/soak"
SOAK_SECONDS="${SOAK_SECONDS:-600}"
THREADS="${THREADS:-6}"
CACHE_BYTES="${CACHE_BYTES:-128M}"
WORK_BYTES="${WORK_BYTES:-384M}"
FETCH_TIMEOUT="${FETCH_TIMEOUT:-6}"
HEAD_TIMEOUT="${HEAD_TIMEOUT:-4}"
HIT_DEADLINE="${HIT_DEADLINE:-2}"
WORK_MARGIN="${WORK_MARGIN:-20}"
THUMBD_PORT="${THUMBD_PORT:-18110}"
NGINX_PORT="${NGINX_PORT:-18111}"
FAULT_BASE_PORT="${FAULT_BASE_PORT:-18120}"
THUMBD_BIN="${THUMBD_BIN:-}"
BUILD_NICE="${BUILD_NICE:-19}"

name=soak
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

# ---------------------------------------------------------------- install, corpus, build
bench_install
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -f "$corpus/manifest.tsv" ] || "$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$here/results"

bench_build

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for port in "$THUMBD_PORT" "$NGINX_PORT" $(seq "$FAULT_BASE_PORT" $((FAULT_BASE_PORT + 7))); do
  port_free "$port" || die "port $port is in use (THUMBD_PORT, NGINX_PORT, FAULT_BASE_PORT)"
done
wait_http() {
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------- origins
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
  default_type application/octet-stream;
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
names_file="$work/names.txt"
awk -F'\t' 'NR > 1 {print $3}' "$corpus/manifest.tsv" >"$names_file"
wait_http "http://127.0.0.1:$NGINX_PORT/src/$(head -1 "$names_file")" || die "nginx did not come up"

python3 "$here/soak/origin.py" --corpus "$corpus" --base-port "$FAULT_BASE_PORT" \
  --trickle-seconds 2 --stall-seconds $((FETCH_TIMEOUT * 3)) --flap-up 10 --flap-down 5 \
  >"$work/origin.out" 2>"$work/origin.err" &
pids+=("$!")
for _ in $(seq 100); do grep -q ready "$work/origin.out" 2>/dev/null && break; sleep 0.1; done
grep -q ready "$work/origin.out" || die "the fault origin did not come up (see $work/origin.err)"

# ---------------------------------------------------------------- thumbd
flags=(--port "$THUMBD_PORT" --cache-bytes "$CACHE_BYTES" --work-bytes "$WORK_BYTES" --allow-loopback-sources
  --fetch-timeout "$FETCH_TIMEOUT" --connect-timeout 2 --head-timeout "$HEAD_TIMEOUT"
  --breaker-cooldown 5 --error-ttl 5)
log "thumbd ${flags[*]}"
GLIBC_TUNABLES="$thumbd_glibc_tunables" "$work/thumbd" "${flags[@]}" 2>"$work/thumbd.log" >/dev/null &
thumbd_pid=$!
pids+=("$thumbd_pid")
wait_http "http://127.0.0.1:$THUMBD_PORT/healthz" || die "thumbd did not come up (see $work/thumbd.log)"

# ---------------------------------------------------------------- the soak
report="$here/results/soak-$(date -u +%Y%m%dT%H%M%SZ).md"
commit="$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
log "soak: $SOAK_SECONDS s, $THREADS load threads; report $report"
verdict=0
python3 "$here/soak/load.py" --thumbd-port "$THUMBD_PORT" --pid "$thumbd_pid" \
  --origin "http://127.0.0.1:$NGINX_PORT/src" --fault-base "$FAULT_BASE_PORT" --names "$names_file" \
  --seconds "$SOAK_SECONDS" --threads "$THREADS" --fetch-timeout "$FETCH_TIMEOUT" --head-timeout "$HEAD_TIMEOUT" \
  --hit-deadline "$HIT_DEADLINE" --work-margin "$WORK_MARGIN" \
  --cache-bytes "$(bytes "$CACHE_BYTES")" --work-bytes "$(bytes "$WORK_BYTES")" \
  --report "$report" --thumbd-log "$work/thumbd.log" \
  --describe "commit \`$commit\`, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before; thumbd \`${flags[*]}\`" ||
  verdict=$?
kill -0 "$thumbd_pid" 2>/dev/null || { log "thumbd is gone (see $work/thumbd.log)"; verdict=1; }
exit "$verdict"

#!/usr/bin/env bash
# Runs a real Prometheus (Debian `prometheus`) against a real thumbd, both on 127.0.0.1, and checks
# through Prometheus' HTTP API that it scraped thumbd: `thumbd_requests_total` has samples, among
# them the hit and miss of a thumbnail made here; the target is up; deploy/prometheus/alerts.yml
# is loaded. Checks deploy/prometheus/*.yml with promtool first. Builds thumbd (release).
# Cleans up everything it started (processes, the temporary directory).
#
#   deploy/test-prometheus.sh
#
# Environment: SKIP_BUILD=1 uses the existing .build/release/thumbd.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

log() { printf '[test-prometheus] %s\n' "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

./scripts/setup.sh prometheus curl python3

tmp="$(mktemp -d /tmp/thumbd-prometheus.XXXXXX)"
pids=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  [ "$rc" = 0 ] || { log "logs:"; tail -n 20 "$tmp"/*.log >&2 2>/dev/null || true; }
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "promtool check config / check rules"
promtool check config deploy/prometheus/prometheus.yml >/dev/null || fail "promtool check config"
promtool check rules deploy/prometheus/alerts.yml >/dev/null || fail "promtool check rules"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "building thumbd (release)"
  nice -n 5 swift build -c release --product thumbd >"$tmp/build.log" 2>&1 || fail "build (see above)"
fi
thumbd="$repo/.build/release/thumbd"
[ -x "$thumbd" ] || fail "no $thumbd"

# Free loopback ports, chosen by the kernel.
read -r thumbd_port metrics_port prometheus_port origin_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(4)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])
for s in socks: s.close()')

# A source image (a 64x48 PNG, written with the standard library) on a loopback origin.
mkdir -p "$tmp/origin"
python3 - "$tmp/origin/p.png" <<'PY'
import struct, sys, zlib
w, h = 64, 48
rows = b"".join(b"\0" + b"".join(bytes((x * 4 % 256, y * 5 % 256, 128)) for x in range(w)) for y in range(h))
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
python3 -m http.server "$origin_port" --bind 127.0.0.1 --directory "$tmp/origin" >"$tmp/origin.log" 2>&1 &
pids+=($!)

"$thumbd" --port "$thumbd_port" --metrics-listen "127.0.0.1:$metrics_port" --allow-loopback-sources \
  --cache-bytes 64M --work-bytes 64M >"$tmp/thumbd.log" 2>&1 &
thumbd_pid=$!
pids+=("$thumbd_pid")

# Prometheus: the deploy alerts, thumbd's metrics listener scraped every second.
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $repo/deploy/prometheus/alerts.yml
scrape_configs:
  - job_name: thumbd
    static_configs:
      - targets: ["127.0.0.1:$metrics_port"]
YML
promtool check config "$tmp/prometheus.yml" >/dev/null || fail "the test's config"
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prometheus_port" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
api="http://127.0.0.1:$prometheus_port"

wait_for() {   # SECONDS DESCRIPTION COMMAND...: retries COMMAND every 0.5 s until it succeeds
  local limit="$1" what="$2"; shift 2
  local end=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$end" ] || fail "$what: not within ${limit}s"
    sleep 0.5
  done
}
wait_for 30 "thumbd answers" curl -fsS "http://127.0.0.1:$thumbd_port/livez"
wait_for 30 "origin answers" curl -fsS -o /dev/null "http://127.0.0.1:$origin_port/p.png"
wait_for 60 "Prometheus ready" curl -fsS "$api/-/ready"

log "requests to thumbd on 127.0.0.1:$thumbd_port (metrics on 127.0.0.1:$metrics_port)"
source_url="$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' \
  "http://127.0.0.1:$origin_port/p.png")"
code() { curl -sS -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "http://127.0.0.1:$thumbd_port/thumb?url=$source_url&w=32")" = 200 ] || fail "thumbnail (miss)"
[ "$(code "http://127.0.0.1:$thumbd_port/thumb?url=$source_url&w=32")" = 200 ] || fail "thumbnail (hit)"
[ "$(code "http://127.0.0.1:$thumbd_port/thumb?w=0")" = 400 ] || fail "bad request"
[ "$(code "http://127.0.0.1:$thumbd_port/nowhere")" = 404 ] || fail "unknown route"
[ "$(code "http://127.0.0.1:$thumbd_port/metrics")" = 404 ] || fail "/metrics must be 404 on the main port"
[ "$(code "http://127.0.0.1:$metrics_port/metrics")" = 200 ] || fail "/metrics on the metrics listener"

# count QUERY: the number of series of an instant query (prints it; fails on an API error).
count() {
  curl -fsS --get "$api/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
answer = json.load(sys.stdin)
assert answer["status"] == "success", answer
print(len(answer["data"]["result"]))'
}
has_samples() { [ "$(count "$1")" -gt 0 ]; }
log "waiting for Prometheus to scrape them"
wait_for 60 "samples of thumbd_requests_total" has_samples 'thumbd_requests_total'
wait_for 30 "the hit" has_samples 'thumbd_requests_total{route="/thumb",status="200",cache="hit"} == 1'
wait_for 30 "the miss" has_samples 'thumbd_requests_total{route="/thumb",status="200",cache="miss"} == 1'
wait_for 30 "the 404" has_samples 'thumbd_requests_total{route="other",status="404"}'
has_samples 'up{job="thumbd"} == 1' || fail "target not up"
has_samples 'thumbd_build_info == 1' || fail "thumbd_build_info"
has_samples 'thumbd_cache_bytes{kind="variant"} > 0' || fail "thumbd_cache_bytes"
series="$(count '{job="thumbd"}')"
rules="$(curl -fsS "$api/api/v1/rules" | python3 -c '
import json, sys
groups = json.load(sys.stdin)["data"]["groups"]
print(sum(len(g["rules"]) for g in groups if g["name"] == "thumbd"))')"
[ "$rules" -gt 0 ] || fail "alerts.yml not loaded"
log "Prometheus has $series series of job thumbd; $rules alert rules loaded"

kill -TERM "$thumbd_pid"
rc=0; wait "$thumbd_pid" || rc=$?
[ "$rc" = 0 ] || fail "thumbd exited $rc on SIGTERM"
log "PASS"

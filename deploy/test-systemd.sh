#!/usr/bin/env bash
# Checks deploy/thumbd.service without systemd as PID 1 (docs/operations.md, "systemd"):
#   1. systemd-analyze verify: no error and no warning (a temporary copy whose ExecStart names
#      the freshly built binary, as verify wants the executable to exist; nothing else changed);
#   2. systemd-analyze security --offline=yes: the exposure score, at most MAX_EXPOSURE (2.0);
#   3. a real run: thumbd as an unprivileged user with no capabilities, under the unit's system
#      call allow list (a call outside it kills the process), RestrictAddressFamilies and
#      MemoryDenyWriteExecute (deploy/sandbox-exec.py builds the same seccomp filters systemd
#      would) and the unit's Environment=, makes thumbnails from every decoder's format into
#      every encoder's, keeps them in its disk cache folder (the unit's CacheDirectory=, made
#      here as systemd would: the user's own, mode 0700), then exits 0 on SIGTERM; started again
#      under the same rules on the same folder, it answers from disk (X-Cache: disk, the same
#      bytes) and exits 0 again.
# Usage: deploy/test-systemd.sh      (THUMBD_BIN=path skips the build; KEEP_WORK=1 keeps logs)
set -euo pipefail
name=systemd
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d /tmp/thumbd-systemd.XXXXXX)"
. "$root/deploy/lib.sh"
unit="$root/deploy/thumbd.service"
MAX_EXPOSURE="${MAX_EXPOSURE:-2.0}"

"$root/scripts/setup.sh" systemd python3-seccomp libvips-tools curl python3 util-linux
bench_build
# The real run's user must be able to execute it.
chmod 755 "$work" "$work/thumbd"

# 1. verify. It checks that ExecStart's binary exists, so the copy points at the built one.
grep -qx 'ExecStart=/usr/local/bin/thumbd' "$unit" || die "ExecStart is not /usr/local/bin/thumbd"
mkdir -p "$work/unit"
sed "s|^ExecStart=/usr/local/bin/thumbd|ExecStart=$work/thumbd|" "$unit" >"$work/unit/thumbd.service"
verify_out="$(systemd-analyze verify --man=no "$work/unit/thumbd.service" 2>&1)" && verify_rc=0 || verify_rc=$?
[ -z "$verify_out" ] || printf '%s\n' "$verify_out" >&2
check "systemd-analyze verify: exit 0, no warning" test "$verify_rc" = 0 -a -z "$verify_out"

# 2. security, offline (no manager to ask).
systemd-analyze security --offline=yes "$unit" >"$work/security.txt" 2>&1 || true
score="$(sed -n 's/.*Overall exposure level for thumbd.service: \([0-9.]*\) \(.*\)/\1 \2/p' "$work/security.txt")"
[ -n "$score" ] || { cat "$work/security.txt" >&2; die "no exposure score"; }
log "exposure score: $score"
log "what still counts against it:"
grep '✗' "$work/security.txt" | sed 's/  */ /g' >&2 || true
check "exposure ${score%% *} <= $MAX_EXPOSURE" python3 -c "import sys; sys.exit(not float('${score%% *}') <= $MAX_EXPOSURE)"

# The disk tier's folder is the one CacheDirectory= makes.
check "the disk cache folder is the unit's CacheDirectory (/var/cache/thumbd)" \
  bash -c 'grep -qx "CacheDirectory=thumbd" "$1" && grep -qx "Environment=THUMBD_DISK_CACHE_DIR=/var/cache/thumbd" "$1"' _ "$unit"

# 3. A real run under the unit's seccomp rules, as an unprivileged user without capabilities.
mkdir -p "$work/sources"
make_sources "$work/sources"
origin_port="$(free_port)"
start_origin "$work/sources" "$origin_port"
port="$(free_port)"
env_args=()
while IFS= read -r line; do env_args+=("${line#Environment=}"); done < <(grep '^Environment=' "$unit")
log "unit environment: ${env_args[*]}"
# CacheDirectory= as systemd makes it (owned by the service's user, CacheDirectoryMode=0700),
# standing in for /var/cache/thumbd.
cache="$work/cache"
install -d -m 0700 -o 65534 -g 65534 "$cache"
# start_sandboxed LOG: thumbd as the unit would run it, in the background (thumbd_pid).
start_sandboxed() {
  env -i PATH=/usr/bin:/bin "${env_args[@]}" THUMBD_PORT="$port" THUMBD_ALLOW_LOOPBACK_SOURCES=true \
    THUMBD_DISK_CACHE_DIR="$cache" \
    setpriv --reuid=65534 --regid=65534 --clear-groups --bounding-set=-all --inh-caps=-all --no-new-privs \
    /usr/bin/python3 "$root/deploy/sandbox-exec.py" "$unit" -- "$work/thumbd" >"$1" 2>&1 &
  thumbd_pid=$!
  pids+=("$thumbd_pid")
}
# stop_sandboxed: SIGTERM, and its exit status in rc.
stop_sandboxed() {
  kill -TERM "$thumbd_pid"
  wait "$thumbd_pid" && rc=0 || rc=$?
  pids=("${pids[@]/$thumbd_pid/}")
}
start_sandboxed "$work/thumbd.log"
wait_for "http://127.0.0.1:$port/livez"
log "thumbd answers under the sandbox (pid $thumbd_pid, $(grep -c . "$work/thumbd.log") log lines)"

made=0
for source in photo.jpg photo.png photo.webp photo.gif photo.avif photo.tif alpha.png; do
  url="$(urlencode "http://127.0.0.1:$origin_port/$source")"
  for format in jpeg png webp avif; do
    out="$work/out-$source-$format"
    code="$(curl -s -o "$out" -w '%{http_code} %{content_type}' "http://127.0.0.1:$port/thumb?url=$url&w=300&format=$format")"
    header="$(vipsheader "$out" 2>/dev/null || true)"
    if [ "$code" = "200 image/$format" ] && [[ "$header" == *": 300x200 "* ]]; then
      made=$((made + 1))
    else
      log "FAIL $source -> $format: $code, ${header:-not an image}"
    fi
  done
done
# Resizing through libvips' vector paths (liborc) on a cover crop, and format=auto.
code="$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: image/webp' \
  "http://127.0.0.1:$port/thumb?url=$(urlencode "http://127.0.0.1:$origin_port/photo.jpg")&w=333&h=333&fit=cover&crop=attention&format=auto")"
[ "$code" = 200 ] && made=$((made + 1)) || log "FAIL cover/attention/auto: $code"
check "28 conversions and a cover crop made under the sandbox ($made of 29)" test "$made" = 29
# The process metrics read /proc and getrlimit: scraped under the filter too.
metrics="$(curl -s "http://127.0.0.1:$port/metrics")"
check "/metrics under the sandbox: requests and process metrics" \
  grep -q '^thumbd_requests_total{.*status="200"' <<<"$metrics"
check "process_open_fds and process_start_time_seconds read under the sandbox" \
  bash -c 'grep -qE "^process_open_fds [1-9]" <<<"$1" && grep -qE "^process_start_time_seconds [1-9][0-9]{9}" <<<"$1"' _ "$metrics"
# The disk tier under the filter: every write done (the queue empty), none failed or refused.
metric() { curl -s "http://127.0.0.1:$port/metrics" | sed -n "s/^$1 //p"; }
for _ in $(seq 100); do [ "$(metric thumbd_disk_cache_write_queue)" = 0 ] && break; sleep 0.1; done
writes="$(metric thumbd_disk_cache_writes_total)"
log "disk cache: $writes writes, $(metric thumbd_disk_cache_entries) entries, $(metric thumbd_disk_cache_bytes) bytes," \
  "$(find "$cache" -name '*.d1' | wc -l) files in the folder"
check "disk cache writes under the sandbox: $writes done, queue empty, none failed, writes not disabled" \
  test "${writes:-0}" -gt 0 -a "$(metric thumbd_disk_cache_write_queue)" = 0 \
  -a "$(metric thumbd_disk_cache_write_failures_total)" = 0 -a "$(metric thumbd_disk_cache_writes_disabled)" = 0
check "thumbd still running (no SIGSYS)" kill -0 "$thumbd_pid"

stop_sandboxed
check "SIGTERM: exit 0 under the sandbox (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -20 "$work/thumbd.log" >&2

# Started again on the same folder (as Restart= or an upgrade would): the thumbnails come from disk.
start_sandboxed "$work/thumbd-again.log"
wait_for "http://127.0.0.1:$port/readyz"
url="$(urlencode "http://127.0.0.1:$origin_port/photo.jpg")"
cache_header="$(curl -s -o "$work/again.webp" -D - "http://127.0.0.1:$port/thumb?url=$url&w=300&format=webp" |
  tr -d '\r' | sed -n 's/^[Xx]-[Cc]ache: //p')"
check "restarted on the same folder under the sandbox: X-Cache: disk (got ${cache_header:-none}), the same bytes" \
  bash -c 'test "$1" = disk && cmp -s "$2" "$3"' _ "$cache_header" "$work/again.webp" "$work/out-photo.jpg-webp"
grep -h 'disk-cache' "$work/thumbd-again.log" | head -1 >&2 || true
stop_sandboxed
check "SIGTERM after the restart: exit 0 (got $rc)" test "$rc" = 0
[ "$rc" = 0 ] || tail -20 "$work/thumbd-again.log" >&2

[ "$fail" = 0 ] || die "some checks failed"
log "all checks passed; exposure score $score"

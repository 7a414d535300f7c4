#!/usr/bin/env bash
# bench/disk.sh — what does thumbd's disk tier (--disk-cache-dir, issue 38) give, through HTTP?
#
#  1. disk hits against nginx static: N thumbnails (every corpus image at HIT_WIDTHS widths from
#     HIT_WIDTH on) made once by a thumbd with a large memory cache (B, which stores them in its
#     folder), the folder copied for a thumbd whose memory cache holds only a few of them (A,
#     SMALL_CACHE), and the very bytes B answered saved as files nginx serves. `wrk -c CONNECTIONS`
#     cycles through all N on A (answered from disk, the memory churning), nginx and B (every
#     request a memory hit, the reference), in slices interleaved A, nginx, B, ROUNDS rounds;
#     req/s of each, A ÷ nginx (goal ≥ 0.8) and B ÷ nginx, and what answered A's requests
#     (thumbd_requests_total by cache outcome, over the slices).
#  2. restart to ready: a thumbd (C) fills a folder to SIZES entries (new widths and qualities of
#     the corpus images, its memory holding the originals); at each size it is stopped (SIGTERM)
#     and started again READY_RUNS times with the folder in the page cache and COLD_RUNS times with
#     the folder out of every cache: exec → first 200 of /readyz, VmRSS then, the `disk-cache` log
#     event, and each stop's time. COLD=loop (root): C's folder is on an ext4 image on a loop
#     device with direct I/O, unmounted and mounted afresh before a cold start (the binary and
#     libraries stay warm, nothing else on the machine is touched; the script runs in a mount
#     namespace of its own); COLD=drop: `echo 3 > /proc/sys/vm/drop_caches` (the whole machine's,
#     thumbd's own binary too); COLD=none: no cold starts.
#  3. the first pass after a restart: A stopped and started again on its folder, every one of the
#     N URLs once (goal: all X-Cache: disk, the bytes and ETag the same as before, no origin
#     fetch); and at each size of 2, after the cold start, SAMPLE of the URLs that filled it.
#     Origin fetches are counted twice: the origin nginx's access log and thumbd_source_fetches_total.
#
# Report: bench/results/disk-<UTC>.md (raw figures in bench/work/disk-run/raw/). Exits non-zero if
# a check fails (a first pass not all from disk, an origin fetch in one, bytes that differ).
#
#   bench/disk.sh                          # about 8 minutes on 2 cores, plus the release build
#   QUICK=1 bench/disk.sh                  # smoke run: small sizes, short slices
#   THUMBD_BIN=.build/release/thumbd ...   # an already built binary
#
# Knobs: ROUNDS (3), SLICES (3 per side and round), SLICE_SECONDS (5), CONNECTIONS (8),
# HIT_WIDTH (300), HIT_WIDTHS (20), SMALL_CACHE (4M), BIG_CACHE (512M), DISK_BYTES (4G),
# SIZES ("1000 10000 50000"), READY_RUNS (3), COLD_RUNS (2), COLD (loop as root, else none),
# SAMPLE (1000), FILL_THREADS (cores + 1), WORKERS (cores), PORT_A/PORT_B/PORT_C/NGINX_PORT
# (18095-18098), THUMBD_BIN, SKIP_INSTALL.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="$here/corpus"
work="$here/work/disk-run"
cores="$(nproc)"
QUICK="${QUICK:-0}"
if [ "$QUICK" = 1 ]; then
  : "${ROUNDS:=1}" "${SLICES:=1}" "${SLICE_SECONDS:=2}" "${HIT_WIDTHS:=4}" "${SIZES:=300 1000}"
  : "${READY_RUNS:=1}" "${COLD_RUNS:=1}" "${SAMPLE:=200}" "${SMALL_CACHE:=1M}"
fi
ROUNDS="${ROUNDS:-3}"
SLICES="${SLICES:-3}"
SLICE_SECONDS="${SLICE_SECONDS:-5}"
CONNECTIONS="${CONNECTIONS:-8}"
HIT_WIDTH="${HIT_WIDTH:-300}"
HIT_WIDTHS="${HIT_WIDTHS:-20}"
SMALL_CACHE="${SMALL_CACHE:-4M}"
BIG_CACHE="${BIG_CACHE:-512M}"
DISK_BYTES="${DISK_BYTES:-4G}"
SIZES="${SIZES:-1000 10000 50000}"
READY_RUNS="${READY_RUNS:-3}"
COLD_RUNS="${COLD_RUNS:-2}"
SAMPLE="${SAMPLE:-1000}"
FILL_THREADS="${FILL_THREADS:-$((cores + 1))}"
WORKERS="${WORKERS:-$cores}"
PORT_A="${PORT_A:-18095}"
PORT_B="${PORT_B:-18096}"
PORT_C="${PORT_C:-18097}"
NGINX_PORT="${NGINX_PORT:-18098}"
THUMBD_BIN="${THUMBD_BIN:-}"
if [ -z "${COLD:-}" ]; then
  COLD=none
  [ "$(id -u)" = 0 ] && command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null && COLD=loop
fi
case "$COLD" in loop | drop | none) ;; *) echo "disk.sh: COLD must be loop, drop or none" >&2; exit 2 ;; esac
# The loop device's mount lives in a mount namespace of this script's own: nothing outside sees
# it, and it goes (and its loop device with it: autoclear) when the script's processes end, even
# on SIGKILL.
if [ "$COLD" = loop ] && [ -z "${DISK_BENCH_NS:-}" ]; then
  export COLD
  exec env DISK_BENCH_NS=1 unshare -m --propagation private bash "$here/disk.sh" "$@"
fi

name=disk
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

bench_install
if ! command -v wrk >/dev/null && [ "${SKIP_INSTALL:-0}" != 1 ]; then
  log "installing wrk"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends wrk >/dev/null
fi
command -v wrk >/dev/null || die "needs wrk (it cycles through the N thumbnails; ab asks for one URL)"
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
"$here/corpus.sh"
for p in "$PORT_A" "$PORT_B" "$PORT_C" "$NGINX_PORT"; do port_free "$p" || die "port $p is in use"; done
[ "$COLD" != drop ] || echo 4 >/proc/sys/vm/drop_caches 2>/dev/null || die "COLD=drop: /proc/sys/vm/drop_caches is not writable"

rm -rf "$work"
raw="$work/raw"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$work/static" "$raw"
bench_build
client=(python3 "$here/disk-client.py")

# ---------------------------------------------------------------- helpers
# metric BASE REGEX: the sum of the /metrics samples whose name (with labels) matches REGEX, or
# "absent" when none does.
metric() {
  curl -fsS -m 10 "$1/metrics" | awk -v re="$2" '!/^#/ && $1 ~ re {s += $2; n++} END {if (n) printf "%.0f\n", s; else print "absent"}'
}
# cache_counts BASE: thumbd_requests_total of /thumb summed by cache outcome, the disk hit counter
# and the memory cache's variant counters, as JSON
cache_counts() {
  curl -fsS -m 10 "$1/metrics" | awk '
    /^thumbd_requests_total[{]/ && /route="\/thumb"/ && match($1, /cache="[a-z_]*"/) {c[substr($1, RSTART + 7, RLENGTH - 8)] += $2}
    $1 == "thumbd_disk_cache_hits_total" {c["disk_hits_total"] += $2}
    $1 == "thumbd_cache_hits_total{kind=\"variant\"}" {c["memory_hits_total"] += $2}
    $1 == "thumbd_cache_misses_total{kind=\"variant\"}" {c["memory_misses_total"] += $2}
    $1 == "thumbd_cache_evictions_total{kind=\"variant\"}" {c["memory_evictions_total"] += $2}
    END {s = ""; for (k in c) s = s sprintf("%s\"%s\": %.0f", (s == "" ? "" : ", "), k, c[k]); print "{" s "}"}'
}
# wait_queue BASE: until the disk writer's queue is empty (up to 300 s)
wait_queue() {
  local q
  for _ in $(seq 3000); do
    q="$(metric "$1" '^thumbd_disk_cache_write_queue$')"
    [ "$q" = 0 ] && return 0
    [ "$q" = absent ] && die "$1 has no thumbd_disk_cache_write_queue (no disk tier?)"
    sleep 0.1
  done
  die "$1: the disk write queue did not empty in 300 s"
}
origin_lines() { grep -c . "$work/nginx/logs/origin.log" 2>/dev/null || true; }
forget_pid() {   # PID: no longer ours to stop
  local p kept=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  pids=("${kept[@]}")
}
# start_thumbd PORT LOG ARGS...: starts thumbd (thumbd's malloc settings) under disk-client.py
# start-ready, which times exec → /readyz 200 and then stays as thumbd's parent until it ends;
# sets started_pid (thumbd), started_parent (the client) and started_json.
start_thumbd() {
  local port="$1" tlog="$2" out="$work/start-$1.json"
  shift 2
  port_free "$port" || die "port $port is still in use"
  : >"$out"
  "${client[@]}" start-ready "http://127.0.0.1:$port/readyz" "$tlog" -- \
    env GLIBC_TUNABLES="$thumbd_glibc_tunables" "$work/thumbd" --port "$port" --workers "$WORKERS" \
    --allow-loopback-sources --drain-delay 0 "$@" >"$out" &
  started_parent=$!
  pids+=("$started_parent")
  while ! grep -q . "$out" && kill -0 "$started_parent" 2>/dev/null; do sleep 0.05; done
  started_json="$(head -1 "$out")"
  [ -n "$started_json" ] || die "thumbd on $port: no answer from disk-client.py start-ready (see $tlog)"
  started_pid="$(json_get "$started_json" pid)"
  [ -n "$(json_get "$started_json" ready_ms)" ] || die "thumbd on $port did not become ready: $started_json (see $tlog)"
  pids+=("$started_pid")
}
# stop_thumbd PID PARENT: SIGTERM (the writer finishes its queue), waits up to 120 s for the exit
# (its parent, disk-client.py, reaps it); sets stopped_ms to the milliseconds it took.
stop_thumbd() {
  local t0 t1
  t0="$(date +%s%N)"
  kill -TERM "$1"
  for _ in $(seq 12000); do kill -0 "$1" 2>/dev/null || break; sleep 0.01; done
  kill -0 "$1" 2>/dev/null && die "thumbd $1 did not stop in 120 s after SIGTERM"
  t1="$(date +%s%N)"
  wait "$2" 2>/dev/null || true
  forget_pid "$1"
  forget_pid "$2"
  stopped_ms=$(((t1 - t0) / 1000000))
}
# the last `disk-cache` log event of a thumbd log (entries/bytes/ms to open)
open_event() { grep 'event=disk-cache' "$1" | tail -1 | tr -d '\r' | cut -c1-400 || true; }
# its seconds, as milliseconds
open_ms() { open_event "$1" | sed -n 's/.* seconds=\([0-9.e-]*\).*/\1/p' | awk '{printf "%.1f\n", $1 * 1000}'; }
json_get() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(d.get(sys.argv[2], ""))' "$1" "$2"; }

# The fill's sources (2.): every corpus image as a 400-px JPEG, made once with the vips CLI. A
# new width of a 20-MP photograph costs a decode of it (~0.1-0.2 s here); of these, a few ms, so
# that 50,000 entries fill in minutes.
small="$here/work/disk-small"
mkdir -p "$small"
for f in "$corpus"/*.jpg "$corpus"/*.png; do
  out="$small/$(basename "${f%.*}").jpg"
  [ -s "$out" ] || vips thumbnail "$f" "${out}[Q=90,strip]" 400
done

# ---------------------------------------------------------------- nginx: origin + static
{
  echo "# Generated by bench/disk.sh; nginx as bench/run.sh runs it (static reference and origin)."
  nginx_conf_head "$work" auto
  cat <<EOF
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 30s;
  keepalive_requests 1000000;
  open_file_cache max=10000 inactive=60s;
  etag on;
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport backlog=4096;
    # the origin: every fetch thumbd makes is a line here (unbuffered: counted right after a pass)
    location /src/ { alias $corpus/; access_log $work/nginx/logs/origin.log bench; }
    location /small/ { alias $small/; access_log $work/nginx/logs/origin.log bench; }
    # the reference: the very bytes thumbd answered, as static files (logged buffered, as run.sh's)
    location /static/ {
      alias $work/static/;
      add_header Cache-Control "public, max-age=86400";
      access_log $work/nginx/logs/static.log bench buffer=64k flush=1s;
    }
  }
}
EOF
} >"$work/nginx/nginx.conf"
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
origin="http://127.0.0.1:$NGINX_PORT/src"
names=()
while IFS=$'\t' read -r _p _path n _rest; do
  [ "$n" = file ] || names+=("$n")
done <"$corpus/manifest.tsv"
wait_http "$origin/${names[0]}" || die "nginx did not come up (see $work/nginx/logs/error.log)"

machine_start="$(uptime)"
busy_start="$(ps -eo pcpu=,comm= --sort=-pcpu | head -5 | awk '{printf "%s%s %s%%", (NR > 1 ? ", " : ""), $2, $1}')"
bench_start="$(date +%s)"

# ---------------------------------------------------------------- 1. disk hits against nginx
N=$((${#names[@]} * HIT_WIDTHS))
log "1. $N thumbnails (${#names[@]} images × $HIT_WIDTHS widths from $HIT_WIDTH): made by B ($BIG_CACHE), A reads them from disk ($SMALL_CACHE)"
for n in "${names[@]}"; do
  enc="$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$origin/$n")"
  for k in $(seq 0 $((HIT_WIDTHS - 1))); do echo "/thumb?url=$enc&w=$((HIT_WIDTH + k))"; done
done >"$work/hit-all.txt"

start_thumbd "$PORT_B" "$work/thumbd-b.log" --cache-bytes "$BIG_CACHE" --disk-cache-dir "$work/disk-b" --disk-cache-bytes "$DISK_BYTES"
pid_b="$started_pid" par_b="$started_parent"
B="http://127.0.0.1:$PORT_B"
o0="$(origin_lines)"
"${client[@]}" pass "$B" "$work/hit-all.txt" "$raw/b-make.tsv" --threads "$cores" --save "$work/static" >"$raw/b-make.json"
wait_queue "$B"
echo "{\"origin_fetches\": $(($(origin_lines) - o0)), \"entries\": \"$(metric "$B" '^thumbd_disk_cache_entries$')\", \"dropped\": \"$(metric "$B" '^thumbd_disk_cache_write_queue_dropped_total$')\", \"rejected\": \"$(metric "$B" '^thumbd_disk_cache_rejected_total$')\", \"write_failures\": \"$(metric "$B" '^thumbd_disk_cache_write_failures_total$')\"}" >"$raw/b-make-disk.json"
log "   made: $(cat "$raw/b-make.json"); disk: $(cat "$raw/b-make-disk.json")"
# the lists: only what B answered with 200 (every line, normally), thumbd's and nginx's in one order
: >"$work/hit-thumbd.txt"
: >"$work/hit-nginx.txt"
while IFS=$'\t' read -r i status _c _b _e _s _t path; do
  [ "$status" = 200 ] || { log "   B answered $status to $path"; continue; }
  f="$(cd "$work/static" && compgen -G "$i.*" | head -1)"
  echo "$path" >>"$work/hit-thumbd.txt"
  echo "/static/$f" >>"$work/hit-nginx.txt"
done <"$raw/b-make.tsv"
N_OK="$(wc -l <"$work/hit-thumbd.txt")"
[ "$N_OK" -gt 0 ] || die "B made no thumbnail (see $work/thumbd-b.log)"
static_bytes="$(du -sb "$work/static" | cut -f1)"

# A: a copy of B's folder (its writer idle: queue 0), without B's lock file
mkdir -p "$work/disk-a"
(cd "$work/disk-b" && find . -mindepth 1 -maxdepth 1 ! -name .lock -exec cp -a {} "$work/disk-a/" \;)
start_thumbd "$PORT_A" "$work/thumbd-a.log" --cache-bytes "$SMALL_CACHE" --disk-cache-dir "$work/disk-a" --disk-cache-bytes "$DISK_BYTES"
pid_a="$started_pid" par_a="$started_parent"
A="http://127.0.0.1:$PORT_A"
log "   A on a copy of B's folder: $(metric "$A" '^thumbd_disk_cache_entries$') entries; first pass"
o0="$(origin_lines)"
"${client[@]}" pass "$A" "$work/hit-all.txt" "$raw/a-copy-pass.tsv" --threads 2 >"$raw/a-copy-pass.json"
echo "{\"origin_fetches\": $(($(origin_lines) - o0)), \"source_fetches\": \"$(metric "$A" '^thumbd_source_fetches_total')\"}" >"$raw/a-copy-pass-origin.json"
"${client[@]}" compare "$raw/b-make.tsv" "$raw/a-copy-pass.tsv" >"$raw/a-copy-pass-compare.json"
log "   A's first pass: $(cat "$raw/a-copy-pass.json") $(cat "$raw/a-copy-pass-origin.json") $(cat "$raw/a-copy-pass-compare.json")"
# B: once more, every answer now from its memory
"${client[@]}" pass "$B" "$work/hit-all.txt" "$raw/b-second.tsv" --threads 2 >"$raw/b-second.json"
log "   B's second pass: $(cat "$raw/b-second.json")"

wrk_cmd=(wrk -t2 -c"$CONNECTIONS" -d"${SLICE_SECONDS}s" --timeout 10s --latency -s "$here/lua/cycle.lua")
: >"$raw/hit.tsv"
slice() {   # ROUND SLICE TARGET BASE LIST PIDS
  local before after out load c0 c1
  load="$(cut -d' ' -f1 /proc/loadavg)"
  before="{}"
  [ "$3" = nginx ] || before="$(cache_counts "$4")"
  # shellcheck disable=SC2086  # one argument per pid
  c0="$(cpu_ticks $6)"
  out="$("${wrk_cmd[@]}" "$4" -- "$5" 2>&1 | grep '^WRK_JSON' | sed 's/^WRK_JSON //')" || true
  # shellcheck disable=SC2086
  c1="$(cpu_ticks $6)"
  [ -n "$out" ] || out='{}'
  after="{}"
  [ "$3" = nginx ] || after="$(cache_counts "$4")"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$out" "$before" "$after" "$load" "$((c1 - c0))" >>"$raw/hit.tsv"
}
clk_tck="$(getconf CLK_TCK)"
nginx_all="$nginx_pid $(ps -o pid= --ppid "$nginx_pid" | tr '\n' ' ')"
steal0="$(awk '$1 == "cpu" {print $9; exit}' /proc/stat)"
total0="$(awk '$1 == "cpu" {s = 0; for (i = 2; i <= NF; i++) s += $i; print s; exit}' /proc/stat)"
for r in $(seq "$ROUNDS"); do
  log "   round $r: $SLICES × (A disk, nginx, B memory), ${SLICE_SECONDS} s each, -c$CONNECTIONS"
  for s in $(seq "$SLICES"); do
    slice "$r" "$s" disk "$A" "$work/hit-thumbd.txt" "$pid_a"
    slice "$r" "$s" nginx "http://127.0.0.1:$NGINX_PORT" "$work/hit-nginx.txt" "$nginx_all"
    slice "$r" "$s" memory "$B" "$work/hit-thumbd.txt" "$pid_b"
  done
done
steal1="$(awk '$1 == "cpu" {print $9; exit}' /proc/stat)"
total1="$(awk '$1 == "cpu" {s = 0; for (i = 2; i <= NF; i++) s += $i; print s; exit}' /proc/stat)"
hit_steal="$(python3 -c "print(f'{100 * ($steal1 - $steal0) / max(1, $total1 - $total0):.1f}')")"
rss_a="$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid_a/status")"
rss_b="$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid_b/status")"
stop_thumbd "$pid_b" "$par_b"

# ---------------------------------------------------------------- 3a. first pass after a restart (A)
log "3. A stopped and started again on its folder; every URL once"
stop_thumbd "$pid_a" "$par_a"
stop_a_ms="$stopped_ms"
start_thumbd "$PORT_A" "$work/thumbd-a.log" --cache-bytes "$SMALL_CACHE" --disk-cache-dir "$work/disk-a" --disk-cache-bytes "$DISK_BYTES"
pid_a="$started_pid" par_a="$started_parent"
restart_a_json="$started_json"
entries_a="$(metric "$A" '^thumbd_disk_cache_entries$')"
o0="$(origin_lines)"
"${client[@]}" pass "$A" "$work/hit-all.txt" "$raw/a-restart-pass.tsv" --threads 2 >"$raw/a-restart-pass.json"
echo "{\"origin_fetches\": $(($(origin_lines) - o0)), \"source_fetches\": \"$(metric "$A" '^thumbd_source_fetches_total')\", \"entries_at_start\": \"$entries_a\", \"stop_ms\": $stop_a_ms, \"start\": $restart_a_json, \"open_event\": $(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$(open_event "$work/thumbd-a.log")")}" >"$raw/a-restart-origin.json"
"${client[@]}" compare "$raw/b-make.tsv" "$raw/a-restart-pass.tsv" >"$raw/a-restart-compare.json"
log "   $(cat "$raw/a-restart-pass.json") $(cat "$raw/a-restart-compare.json")"
stop_thumbd "$pid_a" "$par_a"

# ---------------------------------------------------------------- 2. restart to ready, by size
max_size=0
for L in $SIZES; do [ "$L" -gt "$max_size" ] && max_size=$L; done
fill_dir="$work/disk-c"
mnt=""
if [ "$COLD" = loop ]; then
  # An inode per entry and a 4 KiB block for each, twice over, plus the originals and a journal.
  truncate -s $((max_size * 8192 + 512 * 1048576)) "$work/fill.img"
  mkfs.ext4 -q -F -N $((max_size * 2 + 4096)) "$work/fill.img"
  mnt="$work/mnt"
  mkdir -p "$mnt"
  fill_dir="$mnt/cache"
fi
mount_fresh() {   # the image on a new direct-I/O loop device, mounted: nothing of it in memory
  local loop
  loop="$(losetup --find --show --direct-io=on "$work/fill.img")"
  mount "$loop" "$mnt"
  losetup -d "$loop"   # autoclear: the device goes with the unmount
}
[ "$COLD" != loop ] || mount_fresh

# The fill: new (width, quality) pairs of the small sources, quality first: tiny thumbnails, one
# file and one inode each as a large one's (the opening reads names and stat only, no body).
python3 - "http://127.0.0.1:$NGINX_PORT/small" "$((max_size * 13 / 10 + 1000))" "$small" >"$work/fill.txt" <<'PY'
import os, sys, urllib.parse
origin, count, small = sys.argv[1], int(sys.argv[2]), sys.argv[3]
enc = [urllib.parse.quote(f"{origin}/{n}", safe="") for n in sorted(os.listdir(small)) if n.endswith(".jpg")]
paths = (f"/thumb?url={e}&w={w}&q={q}" for w in range(16, 401) for q in range(50, 101) for e in enc)
for _, p in zip(range(count), paths):
    print(p)
PY
start_thumbd "$PORT_C" "$work/thumbd-c.log" --cache-bytes "$BIG_CACHE" --disk-cache-dir "$fill_dir" --disk-cache-bytes "$DISK_BYTES"
pid_c="$started_pid" par_c="$started_parent"
C="http://127.0.0.1:$PORT_C"
offset=0
: >"$raw/fill.tsv"
: >"$raw/ready.tsv"
: >"$raw/size-pass.tsv"
for L in $SIZES; do
  t0="$(date +%s.%N)"
  o0="$(origin_lines)"
  requests=0
  for _ in 1 2 3 4 5; do
    entries="$(metric "$C" '^thumbd_disk_cache_entries$')"
    [ "$entries" -lt "$L" ] || break
    want=$((L - entries))
    sed -n "$((offset + 1)),$((offset + want))p" "$work/fill.txt" >"$work/chunk.txt"
    [ -s "$work/chunk.txt" ] || die "the fill list ran out at $offset"
    "${client[@]}" pass "$C" "$work/chunk.txt" "$work/chunk.tsv" --threads "$FILL_THREADS" >"$work/chunk.json"
    bad="$(awk -F'\t' '$2 != 200' "$work/chunk.tsv" | wc -l)"
    [ "$bad" = 0 ] || log "   $bad fill requests were not 200 (see $work/chunk.tsv)"
    offset=$((offset + want))
    requests=$((requests + want))
    wait_queue "$C"
  done
  fill_s="$(python3 -c "import time; print(f'{time.time() - $t0:.1f}')")"
  entries="$(metric "$C" '^thumbd_disk_cache_entries$')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$L" "$entries" "$requests" "$fill_s" "$(($(origin_lines) - o0))" \
    "$(metric "$C" '^thumbd_disk_cache_write_queue_dropped_total$')" "$(metric "$C" '^thumbd_disk_cache_bytes$')" \
    "$(metric "$C" '^thumbd_disk_cache_evictions_total$')" >>"$raw/fill.tsv"
  files="$(find "$fill_dir" -type f ! -name .lock | wc -l)"
  du_alloc="$(du -sk "$fill_dir" | cut -f1)"
  du_bytes="$(du -sb "$fill_dir" | cut -f1)"
  log "2. $entries entries ($files files, $((du_alloc / 1024)) MiB allocated) after $requests requests in $fill_s s"
  runs=()
  for k in $(seq "$READY_RUNS"); do runs+=("warm $k"); done
  [ "$COLD" = none ] || for k in $(seq "$COLD_RUNS"); do runs+=("cold $k"); done
  for run in "${runs[@]}"; do
    read -r mode k <<<"$run"
    stop_thumbd "$pid_c" "$par_c"
    stop_ms="$stopped_ms"
    if [ "$mode" = cold ]; then
      if [ "$COLD" = loop ]; then
        umount "$mnt"
        mount_fresh
      else
        sync
        echo 3 >/proc/sys/vm/drop_caches
      fi
    fi
    start_thumbd "$PORT_C" "$work/thumbd-c.log" --cache-bytes "$BIG_CACHE" --disk-cache-dir "$fill_dir" --disk-cache-bytes "$DISK_BYTES"
    pid_c="$started_pid" par_c="$started_parent"
    after="$(metric "$C" '^thumbd_disk_cache_entries$')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$L" "$entries" "$files" "$du_alloc" "$du_bytes" "$mode" "$k" \
      "$(json_get "$started_json" ready_ms)" "$(json_get "$started_json" rss_kb)" "$stop_ms" "$after" \
      "$(open_ms "$work/thumbd-c.log")" >>"$raw/ready.tsv"
    open_event "$work/thumbd-c.log" >>"$raw/open-events.txt"
    log "   $mode $k: ready in $(json_get "$started_json" ready_ms) ms (open $(open_ms "$work/thumbd-c.log") ms), VmRSS $(json_get "$started_json" rss_kb) kB (stop took $stop_ms ms; $after entries)"
  done
  # the first pass over a sample of what filled it, right after the last (cold) start
  python3 -c 'import sys
lines = open(sys.argv[1]).read().splitlines()[:int(sys.argv[2])]
n = int(sys.argv[3])
step = max(1, len(lines) // n)
print("\n".join(lines[::step][:n]))' "$work/fill.txt" "$offset" "$SAMPLE" >"$work/sample.txt"
  o0="$(origin_lines)"
  f0="$(metric "$C" '^thumbd_source_fetches_total')"
  "${client[@]}" pass "$C" "$work/sample.txt" "$raw/size-$L-pass.tsv" --threads 2 >"$raw/size-$L-pass.json"
  printf '%s\t%s\t%s\t%s\n' "$L" "$(cat "$raw/size-$L-pass.json")" "$(($(origin_lines) - o0))" \
    "$(($(metric "$C" '^thumbd_source_fetches_total') - f0))" >>"$raw/size-pass.tsv"
  log "   first pass over $(wc -l <"$work/sample.txt") of them: $(cat "$raw/size-$L-pass.json")"
done
rss_c="$(awk '$1 == "VmRSS:" {print $2}' "/proc/$pid_c/status")"
stop_thumbd "$pid_c" "$par_c"
if [ "$COLD" = loop ]; then umount "$mnt"; rm -f "$work/fill.img"; fi
bench_end="$(date +%s)"

# ---------------------------------------------------------------- report
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit=$(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' (+ uncommitted changes in Sources/)')"
  echo "nproc=$cores"
  echo "cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "mem_total=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel=$(uname -sr)"
  echo "fs=$(df -T "$work" | awk 'NR == 2 {print $2 " on " $1}')"
  echo "uptime_start=$machine_start"
  echo "uptime_end=$(uptime)"
  echo "busiest_at_start=$busy_start"
  echo "hit_steal_percent=$hit_steal"
  echo "bench_seconds=$((bench_end - bench_start))"
  echo "nginx=$("$nginx_bin" -v 2>&1)"
  echo "wrk=$(wrk --version 2>&1 | head -1)"
  echo "quick=$QUICK"
  echo "rounds=$ROUNDS"
  echo "slices=$SLICES"
  echo "slice_seconds=$SLICE_SECONDS"
  echo "connections=$CONNECTIONS"
  echo "workers=$WORKERS"
  echo "images=${#names[@]}"
  echo "hit_width=$HIT_WIDTH"
  echo "hit_widths=$HIT_WIDTHS"
  echo "n=$N"
  echo "n_ok=$N_OK"
  echo "static_bytes=$static_bytes"
  echo "small_cache=$SMALL_CACHE"
  echo "big_cache=$BIG_CACHE"
  echo "disk_bytes=$DISK_BYTES"
  echo "sizes=$SIZES"
  echo "ready_runs=$READY_RUNS"
  echo "cold_runs=$COLD_RUNS"
  echo "cold=$COLD"
  echo "sample=$SAMPLE"
  echo "fill_threads=$FILL_THREADS"
  echo "clk_tck=$clk_tck"
  echo "rss_a_kb=$rss_a"
  echo "rss_b_kb=$rss_b"
  echo "rss_c_kb=$rss_c"
  echo "thumbd_flags=--workers $WORKERS --allow-loopback-sources --drain-delay 0 --disk-cache-bytes $DISK_BYTES (GLIBC_TUNABLES as scripts/glibc-tunables.sh)"
  echo "errors_a=$(grep -ci 'fatal\|crash\|error' "$work/thumbd-a.log" || true)"
  echo "errors_c=$(grep -ci 'fatal\|crash\|error' "$work/thumbd-c.log" || true)"
} >"$raw/env.txt"
mkdir -p "$here/results"
report="$here/results/disk-$(date -u +%Y%m%dT%H%M%SZ).md"
verdict=0
python3 - "$raw" >"$report" <<'PY' || verdict=$?
import json, os, statistics, sys
raw = sys.argv[1]
env = dict(l.rstrip("\n").split("=", 1) for l in open(f"{raw}/env.txt") if "=" in l)
J = lambda name: json.load(open(f"{raw}/{name}"))
failures = []
mib = lambda b: int(b) / 1048576

print("# thumbd disk tier: disk hits against nginx, restart to ready, the first pass after a restart\n")
print(f"- `bench/disk.sh`{' (QUICK=1: the figures mean nothing)' if env['quick'] == '1' else ''}, thumbd `{env['commit']}`, "
      f"{env['date_utc']}, {env['bench_seconds']} s")
print(f"- machine: {env['nproc']} cores ({env['cpu_model']}), {env['mem_total']}, {env['kernel']}, {env['fs']}")
print(f"- load: at the start `{env['uptime_start'].strip()}`; at the end `{env['uptime_end'].strip()}`; "
      f"busiest processes at the start: {env['busiest_at_start']}; steal during the hit slices {env['hit_steal_percent']} %")
print(f"- thumbd flags: `{env['thumbd_flags']}`; {env['nginx']}; {env['wrk']}\n")

# ---- 1
print("## 1. Disk hits against nginx static\n")
make, make_disk = J("b-make.json"), J("b-make-disk.json")
print(f"{env['n']} thumbnails: {env['images']} corpus images × {env['hit_widths']} widths from {env['hit_width']} "
      f"(`/thumb?url=…&w=W`, the source's format), {mib(env['static_bytes']):.1f} MiB in all. Made once by B "
      f"(`--cache-bytes {env['big_cache']}`, {make['seconds']} s, {make_disk['origin_fetches']} origin fetches); "
      f"B's folder then held {make_disk['entries']} entries (write queue drops {make_disk['dropped']}, rejected "
      f"{make_disk['rejected']}, write failures {make_disk['write_failures']}). A runs on a copy of that folder with "
      f"`--cache-bytes {env['small_cache']}`; nginx serves the bytes B answered as files (`open_file_cache`, sendfile, "
      f"`worker_processes auto`). `wrk -t2 -c{env['connections']} -d{env['slice_seconds']}s` with `lua/cycle.lua` cycles "
      f"through all {env['n_ok']} URLs; slices interleaved A, nginx, B; {env['rounds']} rounds × {env['slices']} slices.\n")
cp, cpo, cpc = J("a-copy-pass.json"), J("a-copy-pass-origin.json"), J("a-copy-pass-compare.json")
b2 = J("b-second.json")
print(f"- A's first pass on the copied folder: X-Cache {cp['x_cache']}, statuses {cp['status']}; bodies equal to B's "
      f"{cpc['same_body']}/{cpc['compared']}, ETags equal {cpc['same_etag']}/{cpc['compared']}; origin fetches "
      f"{cpo['origin_fetches']} (nginx log), thumbd_source_fetches_total {cpo['source_fetches']}")
print(f"- B's second pass: X-Cache {b2['x_cache']}\n")

rows = []
for line in open(f"{raw}/hit.tsv"):
    r, s, target, out, before, after, load, ticks = line.rstrip("\n").split("\t")
    rows.append(dict(round=int(r), slice=int(s), target=target, out=json.loads(out), before=json.loads(before),
                     after=json.loads(after), load=load, ticks=int(ticks)))
rounds = sorted({x["round"] for x in rows})
def side(rnd, target):
    sel = [x for x in rows if x["round"] == rnd and x["target"] == target and x["out"]]
    req = sum(x["out"]["requests"] for x in sel)
    dur = sum(x["out"]["duration_us"] for x in sel) / 1e6
    errs = sum(x["out"][k] for x in sel for k in x["out"] if k.startswith("err_"))
    p99 = max((x["out"]["p99_us"] for x in sel), default=0)
    p50 = statistics.median([x["out"]["p50_us"] for x in sel]) if sel else 0
    delta = {}
    for x in sel:
        for k, v in x["after"].items():
            delta[k] = delta.get(k, 0) + v - x["before"].get(k, 0)
    cpu_us = sum(x["ticks"] for x in sel) * 1e6 / int(env["clk_tck"]) / req if req else 0
    return dict(rps=req / dur if dur else 0, req=req, errs=errs, p50=p50, p99=p99, delta=delta, cpu_us=cpu_us,
                slices=" ".join(f"{x['out']['rps']:.0f}" for x in sel))
print("| round | A disk req/s | nginx req/s | B memory req/s | A ÷ nginx | B ÷ nginx | A p50 / p99 ms | nginx p50 / p99 ms | B p50 / p99 ms | server CPU µs per request A / nginx / B | errors A/nginx/B | A answered (requests_total by cache) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ra, rb, da = [], [], {}
for rnd in rounds:
    a, n, b = side(rnd, "disk"), side(rnd, "nginx"), side(rnd, "memory")
    x, y = (a["rps"] / n["rps"] if n["rps"] else 0), (b["rps"] / n["rps"] if n["rps"] else 0)
    ra.append(x); rb.append(y)
    for k, v in a["delta"].items():
        da[k] = da.get(k, 0) + v
    ans = ", ".join(f"{k} {v}" for k, v in sorted(a["delta"].items()) if v and not k.endswith("_total"))
    print(f"| {rnd} | {a['rps']:.0f} ({a['slices']}) | {n['rps']:.0f} ({n['slices']}) | {b['rps']:.0f} ({b['slices']}) | "
          f"{x:.2f} | {y:.2f} | {a['p50']/1000:.2f} / {a['p99']/1000:.2f} | {n['p50']/1000:.2f} / {n['p99']/1000:.2f} | "
          f"{b['p50']/1000:.2f} / {b['p99']/1000:.2f} | {a['cpu_us']:.0f} / {n['cpu_us']:.0f} / {b['cpu_us']:.0f} | "
          f"{a['errs']}/{n['errs']}/{b['errs']} | {ans} |")
served = sum(v for k, v in da.items() if not k.endswith("_total"))
disk_frac = da.get("disk", 0) / served if served else 0
med_a, med_b = statistics.median(ra), statistics.median(rb)
print(f"\n**A (disk) ÷ nginx: median {med_a:.2f}** (goal ≥ 0.8: {'met' if med_a >= 0.8 else 'NOT met'}); "
      f"B (memory) ÷ nginx: median {med_b:.2f}; A ÷ B {med_a / med_b if med_b else 0:.2f}.")
print(f"Over A's slices: {da.get('disk', 0)} of {served} requests answered from disk ({100 * disk_frac:.1f} %), "
      f"{da.get('hit', 0)} from memory ({100 * da.get('hit', 0) / served if served else 0:.1f} %), others "
      f"{ {k: v for k, v in da.items() if k not in ('disk', 'hit') and not k.endswith('_total') and v} }; "
      f"thumbd_disk_cache_hits_total rose by {da.get('disk_hits_total', 0)} (the rest of the disk answers joined a read "
      f"of the same entry already under way); the memory cache's variant counters rose by "
      f"{da.get('memory_hits_total', 0)} hits, {da.get('memory_misses_total', 0)} misses "
      f"({da.get('memory_misses_total', 0) / da['disk'] if da.get('disk') else 0:.2f} per disk answer) and "
      f"{da.get('memory_evictions_total', 0)} evictions. "
      f"VmRSS after the slices: A {int(env['rss_a_kb']) // 1024} MiB, B {int(env['rss_b_kb']) // 1024} MiB.\n")
if disk_frac < 0.5:
    failures.append(f"A answered only {100 * disk_frac:.1f} % from disk (the memory cache is too large for the set?)")

# ---- 2
print("## 2. Restart to ready, by folder size\n")
cold = env["cold"]
how = {"loop": "the folder on an ext4 image on a direct-I/O loop device, unmounted and mounted afresh before the start "
               "(nothing of the folder in any cache; thumbd's binary and libraries stay warm)",
       "drop": "`sync; echo 3 > /proc/sys/vm/drop_caches` before the start (the whole machine's page, dentry and inode "
               "caches: thumbd's binary and libraries are read again too)",
       "none": "not measured (COLD=none)"}[cold]
print(f"C (`--cache-bytes {env['big_cache']}`) fills its folder through HTTP with new (width, quality) pairs "
      f"(`w=16…`, `q=50…100`) of small sources: every corpus image as a 400-px JPEG made with the vips CLI (a new width "
      f"of a 20-MP original costs a decode of it; these cost a few ms). Tiny thumbnails: one file and one inode each, "
      f"as a large one's; the opening reads names and stat only. {env['fill_threads']} connections, then "
      f"`thumbd_disk_cache_write_queue 0` is awaited. "
      f"At each size: stop (SIGTERM, `--drain-delay 0`) and start again, {env['ready_runs']} × warm (the folder in the "
      f"page cache) and {env['cold_runs'] if cold != 'none' else 0} × cold: {how}. Ready = from just before the exec to "
      f"the first 200 of `/readyz` (polled every 2 ms); VmRSS read then.\n")
fill = [l.rstrip("\n").split("\t") for l in open(f"{raw}/fill.tsv")]
print("| size | entries | fill requests | fill s | origin fetches in the fill | write-queue drops | thumbd_disk_cache_bytes | evictions |")
print("|---|---|---|---|---|---|---|---|")
for f in fill:
    print(f"| {f[0]} | {f[1]} | {f[2]} | {f[3]} | {f[4]} | {f[5]} | {mib(f[6]):.1f} MiB | {f[7]} |")
ready = [l.rstrip("\n").split("\t") for l in open(f"{raw}/ready.tsv")]
print("\n| size | entries | files | folder (allocated / bytes) | start | ready ms | of which the folder's opening (log) ms | VmRSS at ready | stop ms (before it) | entries after start |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in ready:
    print(f"| {r[0]} | {r[1]} | {r[2]} | {int(r[3]) / 1024:.1f} MiB / {mib(r[4]):.1f} MiB | {r[5]} {r[6]} | {r[7]} | "
          f"{r[11]} | {int(r[8]) / 1024:.1f} MiB | {r[9]} | {r[10]} |")
    if r[10] != r[1]:
        failures.append(f"size {r[0]}: {r[10]} entries after a {r[5]} start, {r[1]} before")
print("\nMedians:\n")
print("| size | entries | warm ready ms | cold ready ms | warm / cold opening (log) ms | VmRSS at ready (median) |")
print("|---|---|---|---|---|---|")
for size in dict.fromkeys(r[0] for r in ready):
    sel = [r for r in ready if r[0] == size]
    med = lambda mode, col=7: (f"{statistics.median(float(r[col] or 'nan') for r in sel if r[5] == mode):.0f}"
                               if any(r[5] == mode for r in sel) else "n/a")
    print(f"| {size} | {sel[0][1]} | {med('warm')} | {med('cold')} | {med('warm', 11)} / {med('cold', 11)} | "
          f"{statistics.median(int(r[8]) for r in sel) / 1024:.1f} MiB |")
events = [l.strip() for l in open(f"{raw}/open-events.txt")] if os.path.exists(f"{raw}/open-events.txt") else []
if events:
    print("\nthumbd's `disk-cache` log events, in the order of the starts above:\n\n```")
    print("\n".join(events))
    print("```")
# ---- 3a
print("\n## 3. The first pass after a restart\n")
rp, ro, rc = J("a-restart-pass.json"), J("a-restart-origin.json"), J("a-restart-compare.json")
print(f"A stopped (SIGTERM, {ro['stop_ms']} ms to exit) and started again on its folder (ready in "
      f"{ro['start'].get('ready_ms')} ms, {ro['entries_at_start']} entries; log: `{ro['open_event']}`), then every one "
      f"of the {rp['requests']} URLs once, 2 connections:\n")
disk_n = rp["x_cache"].get("disk", 0)
print(f"- X-Cache: {rp['x_cache']}; statuses {rp['status']} → **{disk_n}/{rp['requests']} from disk "
      f"({100 * disk_n / rp['requests']:.1f} %)**")
print(f"- bodies equal to the first answers (B's): {rc['same_body']}/{rc['compared']}; ETags equal: {rc['same_etag']}/{rc['compared']}")
print(f"- origin fetches during the pass: **{ro['origin_fetches']}** (origin nginx's access log); "
      f"thumbd_source_fetches_total {ro['source_fetches']}")
if disk_n != rp["requests"]:
    failures.append(f"first pass after restart: {rp['requests'] - disk_n} of {rp['requests']} not from disk")
if ro["origin_fetches"] != 0:
    failures.append(f"first pass after restart: {ro['origin_fetches']} origin fetches")
if rc["same_body"] != rc["compared"] or rc["same_etag"] != rc["compared"]:
    failures.append("first pass after restart: bodies or ETags differ from before")
if cp["x_cache"].get("disk", 0) != cp["requests"] or cpo["origin_fetches"] != 0 or cpc["same_body"] != cpc["compared"]:
    failures.append("A's first pass on the copied folder was not all disk hits with B's bytes and no origin fetch")

print("\nAnd C, after the last (cold) start at each size of 2, over an even sample of the URLs that filled its folder:\n")
print("| size | requests | X-Cache | statuses | origin fetches (nginx log) | source fetches (metric) |")
print("|---|---|---|---|---|---|")
for line in open(f"{raw}/size-pass.tsv"):
    size, js, ofetch, sfetch = line.rstrip("\n").split("\t")
    d = json.loads(js)
    print(f"| {size} | {d['requests']} | {d['x_cache']} | {d['status']} | {ofetch} | {sfetch} |")
    if d["x_cache"].get("disk", 0) != d["requests"] or ofetch != "0":
        failures.append(f"size {size}: first pass {d['x_cache']}, {ofetch} origin fetches")

print("\n## Verdict\n")
print(f"- goal, disk hits ≥ 0.8 × nginx static: **{'met' if med_a >= 0.8 else 'NOT met'}** (median A ÷ nginx {med_a:.2f}; "
      f"memory hits {med_b:.2f}; {100 * disk_frac:.1f} % of A's answers from disk)")
if failures:
    for f in failures:
        print(f"- FAIL: {f}")
else:
    print("- every check passed: first passes all from disk with the same bytes and ETags, no origin fetch, "
          "entry counts kept across restarts")
print(f"\nRaw figures: `bench/work/disk-run/raw/` (hit.tsv: one line per wrk slice with thumbd's "
      f"requests_total by cache before and after).")
sys.exit(1 if failures else 0)
PY
log "report: $report"
cat "$report" >&2
exit "$verdict"

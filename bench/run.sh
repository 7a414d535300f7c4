#!/usr/bin/env bash
# thumbd benchmark: thumbd side by side with references (nginx serving the same bytes, the plain
# libvips floor of a cold miss: bench/floor/floor.c), ROUNDS alternating rounds (3), a memory mode, and a
# Markdown report in bench/results/<UTC date-time>.md (commit it in place of the previous one).
#
#   bench/run.sh              full run (about 24 minutes on 2 cores)
#   QUICK=1 bench/run.sh      smoke run (short runs, about 3 minutes)
#
# Knobs (environment; see bench/README.md): ROUNDS, HIT_SECONDS, MISS_SECONDS, MEMORY_SECONDS,
# MEMORY_RUNS, AB_REQUESTS, HIT_WIDTH, COLD_CONNECTIONS, NGINX_WORKERS, THUMBD_PORT, NGINX_PORT,
# SIGNED_PORT, SIGNING_KEY, THUMBD_BENCH_ENV, THUMBD_EXTRA_ARGS, SKIP_BUILD, SKIP_INSTALL.
set -euo pipefail

bench="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$bench/.." && pwd)"
work="$bench/work"
corpus="$bench/corpus"
raw="$work/raw"
cd "$repo"

cores="$(nproc)"
QUICK="${QUICK:-0}"
if [ "$QUICK" = 1 ]; then
  : "${HIT_SECONDS:=2}" "${MISS_SECONDS:=5}" "${MEMORY_SECONDS:=5}" "${AB_REQUESTS:=2000}"
  : "${HIT_SLICES:=2}" "${AB_SLICES:=2}"
fi
# Three rounds, not two: this machine's CPU time per unit of work drifts by 10-15 % over minutes,
# so one disturbed round decided a median of two; a median of three outvotes it.
ROUNDS="${ROUNDS:-3}"
HIT_SECONDS="${HIT_SECONDS:-5}"           # each wrk slice of the hit modes
HIT_SLICES="${HIT_SLICES:-4}"             # slices per side and round, interleaved like ab's (below)
MISS_SECONDS="${MISS_SECONDS:-30}"        # each cold-miss / floor / new-size run
MEMORY_SECONDS="${MEMORY_SECONDS:-120}"   # each of the memory-mode runs
MEMORY_RUNS="${MEMORY_RUNS:-3}"
AB_REQUESTS="${AB_REQUESTS:-10000}"      # per ab slice
# ab runs are a second or two each, and on a shared host the CPU the hypervisor lends us swings
# by 2-3x within seconds (see bench/README.md): a round's ab is AB_SLICES short runs of each side,
# interleaved thumbd, nginx, thumbd, ..., summed per side, so both meet the same host.
AB_SLICES="${AB_SLICES:-5}"
AB_CONCURRENCY="${AB_CONCURRENCY:-8}"
HIT_WIDTH="${HIT_WIDTH:-300}"
HIT_CONNECTIONS="${HIT_CONNECTIONS:-8 64}"
NEXT_WIDTH="${NEXT_WIDTH:-384}"            # next-hit mode: one of Next.js' default image sizes
# next-hit mode: Chrome's Accept for images, so every hit negotiates the format (AVIF) as a browser's
NEXT_ACCEPT='image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8'
WRK_THREADS="${WRK_THREADS:-2}"
COLD_CONNECTIONS="${COLD_CONNECTIONS:-$((2 * cores))}"   # 2 x cores: both workers busy + one queued each
WORKERS="${WORKERS:-$cores}"                             # floor/in-process threads: thumbd --workers default = cores
NGINX_WORKERS="${NGINX_WORKERS:-auto}"
THUMBD_PORT="${THUMBD_PORT:-18080}"
NGINX_PORT="${NGINX_PORT:-18081}"
SIGNED_PORT="${SIGNED_PORT:-18082}"       # the second thumbd, with --signing-keys (signed-hit mode)
# a fixed 32-byte bench key (no secret: it signs 127.0.0.1 URLs of this bench only)
SIGNING_KEY="${SIGNING_KEY:-000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f}"
CACHE_BYTES="${CACHE_BYTES:-256M}"
THUMBD_BENCH_ENV="${THUMBD_BENCH_ENV:-}"   # e.g. "GLIBC_TUNABLES=" (glibc's defaults) or "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
# thumbd's glibc malloc settings, for thumbd and thumbd-bench only (the floor keeps glibc's defaults)
# shellcheck source=scripts/glibc-tunables.sh
source "$repo/scripts/glibc-tunables.sh"
THUMBD_EXTRA_ARGS="${THUMBD_EXTRA_ARGS:-}"
WIDTHS="200-399"

log() { printf '[bench %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# ---------------------------------------------------------------- cleanup (always)
pids=()   # every background process we started
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "${sampler_pid:-}" ]; then kill "$sampler_pid" 2>/dev/null || true; fi
  for p in "${pids[@]}"; do
    kill -TERM "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  [ "$rc" = 0 ] || log "failed (exit $rc); logs in $work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- install, corpus, build
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ "${SKIP_INSTALL:-0}" != 1 ]; then
  missing=()
  command -v wrk >/dev/null || missing+=(wrk)
  command -v ab >/dev/null || missing+=(apache2-utils)
  command -v curl >/dev/null || missing+=(curl)
  command -v python3 >/dev/null || missing+=(python3)
  command -v vipsheader >/dev/null || missing+=(libvips-tools)
  command -v gcc >/dev/null || missing+=(gcc)   # bench/floor/floor.c
  if ! command -v nginx >/dev/null && ! [ -x /usr/sbin/nginx ]; then
    if apt-cache show --no-all-versions nginx-light >/dev/null 2>&1; then missing+=(nginx-light); else missing+=(nginx); fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  ./scripts/setup.sh
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"

log "corpus"
"$bench/corpus.sh"

mkdir -p "$work" "$bench/results"
rm -rf "$raw" "$work/static" "$work/nginx" "$work/lists"
mkdir -p "$raw" "$work/static" "$work/nginx/logs" "$work/nginx/tmp" "$work/lists" "$work/bin"

# thumbd-bench is a package of its own (bench/Package.swift), built into bench/.build.
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  log "swift build -c release"
  swift build -c release --product thumbd >"$work/build-thumbd.log" 2>&1 ||
    die "swift build -c release --product thumbd failed: see $work/build-thumbd.log"
  log "swift build -c release --package-path bench (thumbd-bench)"
  if ! swift build -c release --package-path "$bench" --product thumbd-bench >"$work/build-bench.log" 2>&1; then
    log "thumbd-bench did not build (see $work/build-bench.log); the in-process figures will be n/a"
  fi
fi
binpath="$(swift build -c release --show-bin-path)"
benchbinpath="$(swift build -c release --package-path "$bench" --show-bin-path)"
[ -x "$binpath/thumbd" ] || die "no thumbd binary in $binpath"
# Copies, so a concurrent `swift build` cannot swap the binaries under a running bench.
cp "$binpath/thumbd" "$work/bin/thumbd"
rm -f "$work/bin/thumbd-bench"
[ -x "$benchbinpath/thumbd-bench" ] && cp "$benchbinpath/thumbd-bench" "$work/bin/thumbd-bench"

# The cold-miss reference: the plain libvips floor (bench/floor/floor.c), rebuilt on every run
# (it is small) against the same libvips thumbd links.
vips_flags="$(pkg-config --cflags --libs vips 2>"$work/build-floor.log")" || vips_flags=""
# shellcheck disable=SC2206
floor_build=(gcc -O2 -Wall -o "$work/bin/floor" "$bench/floor/floor.c" $vips_flags -pthread)
rm -f "$work/bin/floor"
log "gcc -O2 bench/floor/floor.c"
if [ -z "$vips_flags" ] || ! "${floor_build[@]}" >>"$work/build-floor.log" 2>&1; then
  log "the floor did not build (see $work/build-floor.log); its figures will be n/a"
fi

# ---------------------------------------------------------------- helpers
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_free "$THUMBD_PORT" || die "port $THUMBD_PORT is in use (THUMBD_PORT=...)"
port_free "$NGINX_PORT" || die "port $NGINX_PORT is in use (NGINX_PORT=...)"
port_free "$SIGNED_PORT" || die "port $SIGNED_PORT is in use (SIGNED_PORT=...)"

clk_tck="$(getconf CLK_TCK)"
# cpu_ticks, busy_ticks, steal_ticks, nginx_conf_head
# shellcheck source=bench/common.sh
source "$bench/common.sh"
nginx_pids() { echo "$nginx_pid $(ps -o pid= --ppid "$nginx_pid" | tr '\n' ' ')"; }
vm_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }

# Peak VmRSS (kB) of $1, sampled every 100 ms into $2 until stopped.
sampler_pid=""
start_sampler() {
  (
    peak=0
    while [ -e "/proc/$1/status" ]; do
      while read -r k v _; do
        if [ "$k" = "VmRSS:" ]; then [ "$v" -gt "$peak" ] && peak=$v; break; fi
      done <"/proc/$1/status"
      echo "$peak" >"$2.tmp" && mv "$2.tmp" "$2"
      sleep 0.1
    done
  ) &
  sampler_pid=$!
}
stop_sampler() {
  kill "$sampler_pid" 2>/dev/null || true
  wait "$sampler_pid" 2>/dev/null || true
  sampler_pid=""
}

urlenc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

wait_http() {
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

# status and cache counts of a thumbd request log (default: the first thumbd's) between byte
# offsets $1 and $2
log_counts() {
  tail -c +"$(($1 + 1))" "${3:-$work/thumbd.log}" | head -c "$(($2 - $1))" |
    awk '{for (i = 1; i <= NF; i++) if ($i ~ /^(status|cache)=/) c[$i]++}
         END {for (k in c) printf "%s:%d ", k, c[k]}'
}
log_size() { stat -c %s "${1:-$work/thumbd.log}"; }

runs_list="$raw/runs.list"
: >"$runs_list"

# measure ROUND MODE TARGET ID -- COMMAND...
# Runs COMMAND (wrk / ab / thumbd-bench) with its output in $raw/ID.out, and records in
# $raw/ID.meta: the command, CPU ticks of the target process(es) before/after, peak RSS of thumbd
# sampled during the run, the thumbd log's status/cache counts for the run. Target thumbd-signed
# is the second thumbd (--signing-keys): its pid is the one measured and sampled, its log counted.
measure() {
  local round="$1" mode="$2" target="$3" id="$4"
  shift 5
  local meta="$raw/$id.meta" t_pids c0 c1 off0 off1 start end
  local rss_pid="$thumbd_pid" tlog="$work/thumbd.log"
  case "$target" in
    thumbd | thumbd-thumb) t_pids="$thumbd_pid" ;;
    thumbd-signed) t_pids="$signed_pid" rss_pid="$signed_pid" tlog="$work/thumbd-signed.log" ;;
    nginx) t_pids="$(nginx_pids)" ;;
    *) t_pids="" ;;
  esac
  rm -f "$raw/$id.rss"
  start_sampler "$rss_pid" "$raw/$id.rss"
  # shellcheck disable=SC2086
  c0="$(cpu_ticks $t_pids)"
  local n0 t0 s0
  # shellcheck disable=SC2046  # one argument per pid
  n0="$(cpu_ticks $(nginx_pids))"
  t0="$(cpu_ticks "$thumbd_pid")"
  s0="$(cpu_ticks "$signed_pid")"
  off0="$(log_size "$tlog")"
  local load0 b0 b1 tf="$raw/$id.time"
  load0="$(cut -d' ' -f1-3 /proc/loadavg)"
  b0="$(busy_ticks)"
  local st0 st1
  st0="$(steal_ticks)"
  start="$(date +%s.%N)"
  log "round $round  $mode  $target"
  local rc=0
  # bash's time keyword: CPU seconds of the command itself (the load generator, or thumbd-bench)
  { TIMEFORMAT='%U %S'; time "$@" >"$raw/$id.out" 2>"$raw/$id.err"; } 2>"$tf" || rc=$?
  end="$(date +%s.%N)"
  b1="$(busy_ticks)"
  st1="$(steal_ticks)"
  # shellcheck disable=SC2086
  c1="$(cpu_ticks $t_pids)"
  local n1 t1 s1
  # shellcheck disable=SC2046  # one argument per pid
  n1="$(cpu_ticks $(nginx_pids))"
  t1="$(cpu_ticks "$thumbd_pid")"
  s1="$(cpu_ticks "$signed_pid")"
  stop_sampler
  sleep 0.3   # let thumbd's buffered request log flush this run's lines
  off1="$(log_size "$tlog")"
  {
    echo "round=$round"
    echo "mode=$mode"
    echo "target=$target"
    echo "rc=$rc"
    echo "command=$(printf '%q ' "$@" | sed "s#$repo/##g")"
    echo "wall_seconds=$(echo "$end - $start" | bc)"
    echo "cpu_ticks=$((c1 - c0))"
    echo "nginx_cpu_ticks=$((n1 - n0))"
    echo "thumbd_cpu_ticks=$((t1 - t0))"
    echo "signed_thumbd_cpu_ticks=$((s1 - s0))"
    echo "clk_tck=$clk_tck"
    echo "loadavg_before=$load0"
    echo "machine_busy_ticks=$((b1 - b0))"
    echo "machine_steal_ticks=$((st1 - st0))"
    echo "slice=${SLICE:-}"
    echo "command_cpu_seconds=$(awk '{print $1 + $2}' "$tf" 2>/dev/null)"
    echo "thumbd_peak_rss_kb=$(cat "$raw/$id.rss" 2>/dev/null || echo)"
    echo "rss_pid=$rss_pid"
    echo "thumbd_log_counts=$(log_counts "$off0" "$off1" "$tlog")"
  } >"$meta"
  echo "$id" >>"$runs_list"
  [ "$rc" = 0 ] || log "  $id exited $rc (see $raw/$id.err)"
  return 0
}

# ---------------------------------------------------------------- nginx origin + static reference
log "nginx on 127.0.0.1:$NGINX_PORT (worker_processes $NGINX_WORKERS)"
{
  echo "# Generated by bench/run.sh. Runs in the foreground as the current user, prefix $work/nginx."
  nginx_conf_head "$work" "$NGINX_WORKERS"
  cat <<EOF
  # Buffered like thumbd's request log (background flush).
  access_log $work/nginx/logs/access.log bench buffer=64k flush=1s;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 30s;
  keepalive_requests 1000000;
  open_file_cache max=1000 inactive=60s;
  etag on;
  server {
    listen 127.0.0.1:$NGINX_PORT reuseport backlog=4096;
    # the origin thumbd fetches from (query strings are ignored for static files)
    location /src/ { alias $corpus/; }
    # the reference: the very same thumbnail bytes thumbd serves, as static files
    location /static/ { alias $work/static/; add_header Cache-Control "public, max-age=86400"; }
  }
}
EOF
} >"$work/nginx/nginx.conf"
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
nginx_pid=$!
pids+=("$nginx_pid")
origin="http://127.0.0.1:$NGINX_PORT/src"
names=()
while IFS=$'\t' read -r _p _path name _rest; do
  [ "$name" = file ] || names+=("$name")
done <"$corpus/manifest.tsv"
printf '%s\n' "${names[@]}" >"$work/lists/names.txt"
wait_http "$origin/${names[0]}" || die "nginx did not come up (see $work/nginx/logs/error.log)"

# ---------------------------------------------------------------- thumbd
log "thumbd on 127.0.0.1:$THUMBD_PORT ${THUMBD_BENCH_ENV:+(env $THUMBD_BENCH_ENV)}"
# --workers given explicitly: the floor (and thumbd-bench) run the same number of threads
thumbd_flags=(--cache-bytes "$CACHE_BYTES" --workers "$WORKERS" --allow-loopback-sources)
# shellcheck disable=SC2206
[ -n "$THUMBD_EXTRA_ARGS" ] && thumbd_flags+=($THUMBD_EXTRA_ARGS)
thumbd_cmd=("$work/bin/thumbd" "${thumbd_flags[@]}" --port "$THUMBD_PORT")
# the second thumbd (signed-hit mode): the same flags on its own port, plus the signing key
signed_cmd=("$work/bin/thumbd" "${thumbd_flags[@]}" --port "$SIGNED_PORT" --signing-keys "$SIGNING_KEY")
signed_pid=""
: >"$work/thumbd.log"
# shellcheck disable=SC2086
env GLIBC_TUNABLES="$thumbd_glibc_tunables" $THUMBD_BENCH_ENV "${thumbd_cmd[@]}" 2>>"$work/thumbd.log" >/dev/null &
thumbd_pid=$!
pids+=("$thumbd_pid")
thumbd="http://127.0.0.1:$THUMBD_PORT"
wait_http "$thumbd/healthz" || die "thumbd did not come up (see $work/thumbd.log)"

log "signed thumbd (--signing-keys) on 127.0.0.1:$SIGNED_PORT"
: >"$work/thumbd-signed.log"
# shellcheck disable=SC2086
env GLIBC_TUNABLES="$thumbd_glibc_tunables" $THUMBD_BENCH_ENV "${signed_cmd[@]}" 2>>"$work/thumbd-signed.log" >/dev/null &
signed_pid=$!
pids+=("$signed_pid")
signed="http://127.0.0.1:$SIGNED_PORT"
wait_http "$signed/healthz" || die "the signed thumbd did not come up (see $work/thumbd-signed.log)"

# ---------------------------------------------------------------- hit mode preparation
log "warming w=$HIT_WIDTH for ${#names[@]} images, saving the thumbnails as nginx static files"
: >"$work/lists/hit-thumbd.txt"
: >"$work/lists/hit-nginx.txt"
warm_fail=0
for n in "${names[@]}"; do
  path="/thumb?url=$(urlenc "$origin/$n")&w=$HIT_WIDTH"
  hdr="$work/static/.headers"
  code="$(curl -sS -o "$work/static/$n.tmp" -D "$hdr" -w '%{http_code}' "$thumbd$path")" || code=000
  if [ "$code" != 200 ]; then
    log "  warm-up $n: HTTP $code"
    warm_fail=$((warm_fail + 1))
    rm -f "$work/static/$n.tmp"
    continue
  fi
  ctype="$(awk -F': *' 'tolower($1) == "content-type" {print $2}' "$hdr" | tr -d '\r')"
  case "$ctype" in
    image/png) ext=png ;; image/webp) ext=webp ;; image/avif) ext=avif ;; *) ext=jpg ;;
  esac
  # The cached copy must be what we save: a second GET must be a hit with the same bytes.
  code2="$(curl -sS -o "$work/static/$n.2" -D "$hdr" -w '%{http_code}' "$thumbd$path")"
  [ "$code2" = 200 ] || log "  $n: second request answered $code2"
  grep -qi '^x-cache: *hit' "$hdr" || log "  $n: second request was not a cache hit"
  cmp -s "$work/static/$n.tmp" "$work/static/$n.2" || log "  $n: second response differs"
  rm -f "$work/static/$n.2"
  mv "$work/static/$n.tmp" "$work/static/${n%.*}.$ext"
  echo "$path" >>"$work/lists/hit-thumbd.txt"
  echo "/static/${n%.*}.$ext" >>"$work/lists/hit-nginx.txt"
done
rm -f "$work/static/.headers"
[ -s "$work/lists/hit-thumbd.txt" ] || die "no thumbnail could be made (see $work/thumbd.log)"

# signed hit: every hit path signed for the second thumbd, warmed twice (the second must be a hit
# with the bytes nginx serves, i.e. the unsigned thumbd's)
log "signing and warming ${#names[@]} signed hit URLs on the signed thumbd"
: >"$work/lists/hit-signed.txt"
while read -r p; do
  sp="$("$work/bin/thumbd" sign --key "$SIGNING_KEY" "$p" </dev/null)" || die "thumbd sign failed for $p"
  [ -n "$sp" ] || die "thumbd sign printed nothing for $p"
  echo "$sp" >>"$work/lists/hit-signed.txt"
done <"$work/lists/hit-thumbd.txt"
signed_warm_fail=0
signed_check() {   # URL STATIC_PATH WHICH: one GET; 0 if 200 (and, for WHICH=2, a hit with nginx's bytes)
  local out="$work/static/.signed" hdr="$work/static/.signed-headers" code
  code="$(curl -sS -o "$out" -D "$hdr" -w '%{http_code}' "$1")" || code=000
  if [ "$code" != 200 ]; then log "  signed warm-up $3 of $2: HTTP $code"; return 1; fi
  if [ "$3" = 2 ]; then
    grep -qi '^x-cache: *hit' "$hdr" || { log "  signed $2: second request was not a cache hit"; return 1; }
    cmp -s "$out" "$work$2" || { log "  signed $2: bytes differ from the static file"; return 1; }
  fi
  return 0
}
while IFS=$'\t' read -r sp s; do
  if ! signed_check "$signed$sp" "$s" 1 || ! signed_check "$signed$sp" "$s" 2; then
    signed_warm_fail=$((signed_warm_fail + 1))
  fi
done < <(paste "$work/lists/hit-signed.txt" "$work/lists/hit-nginx.txt")
rm -f "$work/static/.signed" "$work/static/.signed-headers"
# the signed instance must really check: the unsigned target is refused (403)
unsigned_code="$(curl -sS -o /dev/null -w '%{http_code}' "$signed$(head -1 "$work/lists/hit-thumbd.txt")")" || unsigned_code=000
[ "$unsigned_code" = 403 ] || log "  the signed thumbd answered an unsigned URL with HTTP $unsigned_code (expected 403)"

# next hit: /_next/image at a Next.js width with a browser's Accept (AVIF), warmed twice (the
# second a hit with the same bytes), the answers saved as nginx's static files for the reference;
# beside it the /thumb URL of the very same bytes (format=avif: the same thumbnail, its own
# entry), so the two routes' hits are compared on one process and one set of bytes.
log "warming /_next/image w=$NEXT_WIDTH for ${#names[@]} images with a browser's Accept"
mkdir -p "$work/static/next"
: >"$work/lists/next-thumbd.txt"
: >"$work/lists/next-thumb.txt"
: >"$work/lists/next-nginx.txt"
next_warm_fail=0
for n in "${names[@]}"; do
  path="/_next/image?url=$(urlenc "$origin/$n")&w=$NEXT_WIDTH&q=75"
  hdr="$work/static/.headers"
  code="$(curl -sS -H "Accept: $NEXT_ACCEPT" -o "$work/static/next/$n.tmp" -D "$hdr" -w '%{http_code}' "$thumbd$path")" || code=000
  ctype="$(awk -F': *' 'tolower($1) == "content-type" {print $2}' "$hdr" | tr -d '\r')"
  code2="$(curl -sS -H "Accept: $NEXT_ACCEPT" -o "$work/static/next/$n.2" -D "$hdr" -w '%{http_code}' "$thumbd$path")" || code2=000
  if [ "$code" != 200 ] || [ "$code2" != 200 ] || ! grep -qi '^x-cache: *hit' "$hdr" \
    || ! cmp -s "$work/static/next/$n.tmp" "$work/static/next/$n.2"; then
    log "  /_next/image warm-up $n: HTTP $code then $code2 (a hit with the same bytes expected)"
    next_warm_fail=$((next_warm_fail + 1))
    rm -f "$work/static/next/$n.tmp" "$work/static/next/$n.2"
    continue
  fi
  case "$ctype" in
    image/png) ext=png ;; image/webp) ext=webp ;; image/avif) ext=avif ;; *) ext=jpg ;;
  esac
  rm -f "$work/static/next/$n.2"
  mv "$work/static/next/$n.tmp" "$work/static/next/${n%.*}.$ext"
  thumb_path="/thumb?url=$(urlenc "$origin/$n")&w=$NEXT_WIDTH&q=75&format=$ext"
  curl -sS -o "$work/static/next/$n.thumb" "$thumbd$thumb_path" || true
  curl -sS -o "$work/static/next/$n.thumb" -D "$hdr" "$thumbd$thumb_path" || true
  if ! grep -qi '^x-cache: *hit' "$hdr" || ! cmp -s "$work/static/next/$n.thumb" "$work/static/next/${n%.*}.$ext"; then
    log "  /thumb twin of /_next/image $n: not a hit with the same bytes"
    next_warm_fail=$((next_warm_fail + 1))
  fi
  rm -f "$work/static/next/$n.thumb"
  echo "$path" >>"$work/lists/next-thumbd.txt"
  echo "$thumb_path" >>"$work/lists/next-thumb.txt"
  echo "/static/next/${n%.*}.$ext" >>"$work/lists/next-nginx.txt"
done
rm -f "$work/static/.headers"
next_type="$(curl -sS -H "Accept: $NEXT_ACCEPT" -o /dev/null -w '%{content_type}' "$thumbd$(head -1 "$work/lists/next-thumbd.txt")")" || next_type=none

ab_thumbd_path="$(head -1 "$work/lists/hit-thumbd.txt")"
ab_nginx_path="$(head -1 "$work/lists/hit-nginx.txt")"
wrk_hit=(wrk -t"$WRK_THREADS" -d"${HIT_SECONDS}s" --timeout 10s --latency -s "$bench/lua/cycle.lua")
wrk_miss=(wrk -t"$WRK_THREADS" -c"$COLD_CONNECTIONS" --timeout 30s --latency -s "$bench/lua/misses.lua")
inprocess=(env GLIBC_TUNABLES="$thumbd_glibc_tunables" "$work/bin/thumbd-bench" inprocess --corpus "$corpus" --threads "$WORKERS" --widths "$WIDTHS")
[ -x "$work/bin/thumbd-bench" ] || inprocess=(sh -c 'echo "thumbd-bench is not built" >&2; exit 127')
# the same threads as thumbd's workers; JPEG Q80, widths 200-399, images in manifest order
floor=("$work/bin/floor" --corpus "$corpus" --threads "$WORKERS")
[ -x "$work/bin/floor" ] || floor=(sh -c 'echo "bench/floor/floor.c is not built" >&2; exit 127')

# Before each round's hit runs: every hit URL once more (cold-miss runs evict LRU entries), and
# check that thumbd still answers the bytes nginx serves.
rewarm_hits() {
  local p s out="$work/static/.rewarm"
  paste "$work/lists/hit-thumbd.txt" "$work/lists/hit-nginx.txt" | while IFS=$'\t' read -r p s; do
    curl -fsS -o "$out" "$thumbd$p" || log "  re-warm failed: $p"
    cmp -s "$out" "$work${s}" || log "  re-warm: $p now differs from $s"
  done
  paste "$work/lists/hit-signed.txt" "$work/lists/hit-nginx.txt" | while IFS=$'\t' read -r p s; do
    curl -fsS -o "$out" "$signed$p" || log "  signed re-warm failed: $p"
    cmp -s "$out" "$work${s}" || log "  signed re-warm: $p now differs from $s"
  done
  paste "$work/lists/next-thumbd.txt" "$work/lists/next-nginx.txt" | while IFS=$'\t' read -r p s; do
    curl -fsS -H "Accept: $NEXT_ACCEPT" -o "$out" "$thumbd$p" || log "  next re-warm failed: $p"
    cmp -s "$out" "$work${s}" || log "  next re-warm: $p now differs from $s"
  done
  rm -f "$out"
}
runtag="$(date +%s)"

# thumbd's hit runs are measured with /metrics scraped every second meanwhile (as a Prometheus
# would), so the hit ratio to nginx is the one with metrics on. The scrapes it made are counted.
scrapes_file="$work/metrics-scrapes"
: >"$scrapes_file"
with_scrapes() {   # COMMAND...: runs it while a background loop GETs $thumbd/metrics every second
  ( while :; do
      curl -fsS -o /dev/null "$thumbd/metrics" && echo ok >>"$scrapes_file" || echo failed >>"$scrapes_file"
      sleep 1
    done ) &
  local scraper=$! rc=0
  "$@" || rc=$?
  kill "$scraper" 2>/dev/null || true
  wait "$scraper" 2>/dev/null || true
  return "$rc"
}

# ---------------------------------------------------------------- the rounds
bench_start="$(date +%s)"
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  [ "$round" = 1 ] || rewarm_hits
  for c in $HIT_CONNECTIONS; do
    for k in $(seq "$HIT_SLICES"); do
      SLICE=$k with_scrapes measure "$round" "hit-c$c" thumbd "r$round-hit-c$c-thumbd-s$k" -- \
        "${wrk_hit[@]}" -c"$c" "$thumbd" -- "$work/lists/hit-thumbd.txt"
      SLICE=$k measure "$round" "hit-c$c" nginx "r$round-hit-c$c-nginx-s$k" -- \
        "${wrk_hit[@]}" -c"$c" "http://127.0.0.1:$NGINX_PORT" -- "$work/lists/hit-nginx.txt"
    done
  done
  # signed hit: the second thumbd (--signing-keys), every request with a valid &sig=
  for k in $(seq "$HIT_SLICES"); do
    SLICE=$k measure "$round" signed-hit-c8 thumbd-signed "r$round-signed-hit-c8-thumbd-signed-s$k" -- \
      "${wrk_hit[@]}" -c8 "$signed" -- "$work/lists/hit-signed.txt"
    SLICE=$k measure "$round" signed-hit-c8 nginx "r$round-signed-hit-c8-nginx-s$k" -- \
      "${wrk_hit[@]}" -c8 "http://127.0.0.1:$NGINX_PORT" -- "$work/lists/hit-nginx.txt"
  done
  # next hit: /_next/image with a browser's Accept (the format negotiated on every hit), against
  # nginx serving the same bytes; its ratio is set beside hit -c8's in the report
  for k in $(seq "$HIT_SLICES"); do
    SLICE=$k measure "$round" next-hit-c8 thumbd "r$round-next-hit-c8-thumbd-s$k" -- \
      "${wrk_hit[@]}" -c8 -H "Accept: $NEXT_ACCEPT" "$thumbd" -- "$work/lists/next-thumbd.txt"
    SLICE=$k measure "$round" next-hit-c8 thumbd-thumb "r$round-next-hit-c8-thumbd-thumb-s$k" -- \
      "${wrk_hit[@]}" -c8 -H "Accept: $NEXT_ACCEPT" "$thumbd" -- "$work/lists/next-thumb.txt"
    SLICE=$k measure "$round" next-hit-c8 nginx "r$round-next-hit-c8-nginx-s$k" -- \
      "${wrk_hit[@]}" -c8 -H "Accept: $NEXT_ACCEPT" "http://127.0.0.1:$NGINX_PORT" -- "$work/lists/next-nginx.txt"
  done
  for k in $(seq "$AB_SLICES"); do
    SLICE=$k measure "$round" ab thumbd "r$round-ab-thumbd-s$k" -- ab -q -c "$AB_CONCURRENCY" -n "$AB_REQUESTS" "$thumbd$ab_thumbd_path"
    SLICE=$k measure "$round" ab nginx "r$round-ab-nginx-s$k" -- ab -q -c "$AB_CONCURRENCY" -n "$AB_REQUESTS" "http://127.0.0.1:$NGINX_PORT$ab_nginx_path"
  done

  measure "$round" cold thumbd "r$round-cold-thumbd" -- \
    "${wrk_miss[@]}" -d"${MISS_SECONDS}s" "$thumbd" -- cold "$work/lists/names.txt" "$origin" "$runtag-r$round" "$WRK_THREADS"
  measure "$round" cold floor "r$round-cold-floor" -- "${floor[@]}" --seconds "$MISS_SECONDS"

  # new size of a seen photo: cache the originals (source URL ...?ns=TAG, new each round) with
  # one request each at w=400, then only new widths 200-399 of them
  tag="$runtag-r$round"
  for n in "${names[@]}"; do
    curl -fsS -o /dev/null "$thumbd/thumb?url=$(urlenc "$origin/$n?ns=$tag")&w=400" || log "  new-size warm-up $n failed"
  done
  measure "$round" newsize thumbd "r$round-newsize-thumbd" -- \
    "${wrk_miss[@]}" -d"${MISS_SECONDS}s" "$thumbd" -- newsize "$work/lists/names.txt" "$origin" "$tag" "$WRK_THREADS"
done

# ---------------------------------------------------------------- memory mode
# The reference's peak over as many runs, each as long as a thumbd memory run, alternating with
# them: a peak is a maximum, and it grows with the time (and the number of runs) it has to catch
# two large decodes at once, so a single or shorter reference run would understate the working set
# thumbd is compared against — thumbd's highest of MEMORY_RUNS peaks against the reference's
# highest of as many. JPEG, as the memory runs ask for (misses.lua cold mode: format=jpeg).
# Growth is judged on what thumbd still holds 3 s after each run (its trim runs every second, and
# the cache is full from the first run on), not on the peaks: a peak is where two large decodes
# happened to meet, and it moves by ±5 % from run to run in the reference too, which holds nothing.
for m in $(seq "$MEMORY_RUNS"); do
  measure "$m" memory thumbd "memory-$m" -- \
    "${wrk_miss[@]}" -d"${MEMORY_SECONDS}s" "$thumbd" -- cold "$work/lists/names.txt" "$origin" "$runtag-m$m" "$WRK_THREADS"
  sleep 3
  echo "thumbd_idle_rss_kb=$(vm_kb "$thumbd_pid" VmRSS)" >>"$raw/memory-$m.meta"
  measure "$m" memory inprocess "memory-inprocess-$m" -- "${inprocess[@]}" --format jpeg --seconds "$MEMORY_SECONDS"
done
bench_end="$(date +%s)"
thumbd_hwm_kb="$(vm_kb "$thumbd_pid" VmHWM)"
thumbd_rss_end_kb="$(vm_kb "$thumbd_pid" VmRSS)"
kill -0 "$thumbd_pid" 2>/dev/null || die "thumbd is gone (see $work/thumbd.log)"
signed_hwm_kb="$(vm_kb "$signed_pid" VmHWM 2>/dev/null || true)"
kill -0 "$signed_pid" 2>/dev/null || die "the signed thumbd is gone (see $work/thumbd-signed.log)"

# ---------------------------------------------------------------- environment + report
cpu_model="$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "quick=$QUICK"
  echo "rounds=$ROUNDS"
  echo "nproc=$cores"
  echo "cpu_model=$cpu_model"
  echo "mem_total=$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  echo "kernel=$(uname -sr)"
  echo "os=$(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "swift=$(swift --version 2>&1 | grep -m1 'Swift version')"
  echo "libvips=$(pkg-config --modversion vips 2>/dev/null || vips --version)"
  echo "nginx=$("$nginx_bin" -v 2>&1)"
  echo "wrk=$(wrk --version 2>&1 | head -1)"
  echo "ab=$(ab -V 2>&1 | head -1)"
  echo "gcc=$(gcc --version 2>/dev/null | head -1)"
  echo "floor_build=gcc -O2 -Wall -o bench/work/bin/floor bench/floor/floor.c \$(pkg-config --cflags --libs vips) -pthread"
  echo "floor_built=$([ -x "$work/bin/floor" ] && echo yes || echo no)"
  echo "commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null)$(git -C "$repo" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || echo ' (+ uncommitted changes in Sources/)')"
  echo "thumbd_cmd=${THUMBD_BENCH_ENV:+env $THUMBD_BENCH_ENV }${thumbd_cmd[*]/#$work/bench/work} (log-requests: default true)"
  echo "signed_cmd=${THUMBD_BENCH_ENV:+env $THUMBD_BENCH_ENV }${signed_cmd[*]/#$work/bench/work}"
  echo "signed_port=$SIGNED_PORT"
  echo "thumbd_bench_env=${THUMBD_BENCH_ENV:-(none)}"
  echo "nginx_workers=$NGINX_WORKERS"
  echo "nginx_worker_count=$(ps -o pid= --ppid "$nginx_pid" | wc -l)"
  echo "workers=$WORKERS"
  echo "cache_bytes=$CACHE_BYTES"
  echo "hit_seconds=$HIT_SECONDS"
  echo "metrics_scrapes=$(grep -c '^ok' "$scrapes_file" || true) ok, $(grep -c '^failed' "$scrapes_file" || true) failed (GET /metrics every second during thumbd's hit runs)"
  echo "miss_seconds=$MISS_SECONDS"
  echo "memory_seconds=$MEMORY_SECONDS"
  echo "memory_runs=$MEMORY_RUNS"
  echo "ab_requests=$AB_REQUESTS"
  echo "ab_concurrency=$AB_CONCURRENCY"
  echo "ab_slices=$AB_SLICES"
  echo "hit_slices=$HIT_SLICES"
  echo "cold_connections=$COLD_CONNECTIONS"
  echo "wrk_threads=$WRK_THREADS"
  echo "hit_width=$HIT_WIDTH"
  echo "widths=$WIDTHS"
  echo "corpus_images=${#names[@]}"
  echo "hit_images=$(wc -l <"$work/lists/hit-thumbd.txt")"
  echo "warm_failures=$warm_fail"
  echo "signed_hit_images=$(wc -l <"$work/lists/hit-signed.txt")"
  echo "signed_warm_failures=$signed_warm_fail"
  echo "signed_unsigned_status=$unsigned_code"
  echo "next_width=$NEXT_WIDTH"
  echo "next_accept=$NEXT_ACCEPT"
  echo "next_hit_images=$(wc -l <"$work/lists/next-thumbd.txt")"
  echo "next_warm_failures=$next_warm_fail"
  echo "next_content_type=$next_type"
  echo "signed_vmhwm_kb=$signed_hwm_kb"
  echo "ab_thumbd_url=$thumbd$ab_thumbd_path"
  echo "ab_nginx_url=http://127.0.0.1:$NGINX_PORT$ab_nginx_path"
  echo "thumbd_vmhwm_kb=$thumbd_hwm_kb"
  echo "thumbd_rss_end_kb=$thumbd_rss_end_kb"
  echo "bench_seconds=$((bench_end - bench_start))"
  echo "loadavg_start=$load_start"
  echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "skip_build=${SKIP_BUILD:-0}"
  echo "thumbd_binary_mtime=$(date -u -r "$work/bin/thumbd" +%Y-%m-%dT%H:%M:%SZ)"
  echo "thumbd_log_counts=$(log_counts 0 "$(log_size)")"
  echo "thumbd_log_other=$(grep -v ' route=' "$work/thumbd.log" | grep -c . || true)"
  echo "signed_log_counts=$(log_counts 0 "$(log_size "$work/thumbd-signed.log")" "$work/thumbd-signed.log")"
  echo "signed_log_other=$(grep -v ' route=' "$work/thumbd-signed.log" | grep -c . || true)"
  echo "nginx_error_lines=$(grep -c . "$work/nginx/logs/error.log" || true)"
} >"$raw/env.txt"
grep -v ' route=' "$work/thumbd.log" | head -20 >"$raw/thumbd-other-log-lines.txt" || true
grep -v ' route=' "$work/thumbd-signed.log" | head -20 >"$raw/thumbd-signed-other-log-lines.txt" || true

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report="$bench/results/$stamp.md"
python3 "$bench/report.py" "$raw" "$corpus/manifest.tsv" >"$report"
log "report: $report"
sed -n '/^## Targets/,/^## /p' "$report" | sed '$d' >&2

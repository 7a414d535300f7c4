#!/usr/bin/env bash
# Do cached thumbnails stay fast while the workers are saturated? Hit latency under a flood of
# misses, against nginx serving the same bytes while plain libvips burns the cores.
#
# A probe (bench/hit-latency-client.py: one keep-alive connection, one GET every INTERVAL_MS,
# timed with perf_counter_ns) asks for one cached thumbnail,
#   A. from a release thumbd (its default flags, with --allow-loopback-sources), IDLE_SECONDS with
#      nothing else running, then FLOOD_SECONDS while FLOOD_CLIENTS clients ask for thumbnails of
#      sources thumbd has never seen (every request a cold miss: a new source URL, widths 200-399,
#      JPEG), which keeps every worker busy and the queue full;
#   B. from nginx serving the very same bytes as a static file, IDLE_SECONDS idle, then
#      FLOOD_SECONDS while the plain libvips floor (bench/floor/floor.c, as many threads as
#      thumbd has workers) thumbnails the corpus flat out.
# The load starts LEAD seconds before the probe and is stopped when the probe is done. ROUNDS rounds (2) run A then
# B each; the report gives every phase's p50/p90/p99/max per round and over all rounds, the ratio
# thumbd p99 under the flood / nginx p99 under the burn (target <= 0.5), the idle ratio, the CPU
# the load used (cores busy), and the nice value of each of thumbd's threads after the flood.
# Writes bench/results/hit-latency-<UTC>.md.
#
#   bench/hit-latency.sh                      # about 4 minutes with an up-to-date build
#   THUMBD_BIN=path bench/hit-latency.sh      # a given binary instead of a release build
#   ROUNDS=1 IDLE_SECONDS=3 FLOOD_SECONDS=5 bench/hit-latency.sh   # smoke run
#
# Knobs: ROUNDS (2), IDLE_SECONDS (20), FLOOD_SECONDS (30), LEAD (2), INTERVAL_MS (10),
# FLOOD_CLIENTS (8), WORKERS (cores: thumbd's --workers and the floor's threads), HIT_WIDTH (300),
# BURN_NICE (0; 10: the floor at the nice value of thumbd's workers, a control, not the target),
# THUMBD_EXTRA_ARGS, THUMBD_PORT (18140), NGINX_PORT (18141), CORPUS, THUMBD_BIN, SKIP_INSTALL,
# BUILD_NICE (19). All traffic stays on 127.0.0.1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/hit-latency"
ROUNDS="${ROUNDS:-2}"
IDLE_SECONDS="${IDLE_SECONDS:-20}"
FLOOD_SECONDS="${FLOOD_SECONDS:-30}"
LEAD="${LEAD:-2}"
INTERVAL_MS="${INTERVAL_MS:-10}"
FLOOD_CLIENTS="${FLOOD_CLIENTS:-8}"
WORKERS="${WORKERS:-$(nproc)}"
HIT_WIDTH="${HIT_WIDTH:-300}"
BURN_NICE="${BURN_NICE:-0}"
THUMBD_EXTRA_ARGS="${THUMBD_EXTRA_ARGS:-}"
THUMBD_PORT="${THUMBD_PORT:-18140}"
NGINX_PORT="${NGINX_PORT:-18141}"
THUMBD_BIN="${THUMBD_BIN:-}"

name=hit-latency
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

# ---------------------------------------------------------------- install, corpus, build
bench_install
if [ "${SKIP_INSTALL:-0}" != 1 ] && ! command -v gcc >/dev/null; then
  log "installing gcc"
  $([ "$(id -u)" -eq 0 ] || echo sudo) apt-get install -y -q --no-install-recommends gcc >/dev/null
fi
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -f "$corpus/manifest.tsv" ] || "$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$work/static" "$work/raw" "$here/results"
bench_build
log "gcc -O2 bench/floor/floor.c"
# shellcheck disable=SC2046  # pkg-config's flags are separate words
gcc -O2 -Wall -o "$work/floor" "$here/floor/floor.c" $(pkg-config --cflags --libs vips) -pthread \
  >"$work/build-floor.log" 2>&1 || die "the floor did not build (see $work/build-floor.log)"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_free "$THUMBD_PORT" || die "port $THUMBD_PORT is in use (THUMBD_PORT=...)"
port_free "$NGINX_PORT" || die "port $NGINX_PORT is in use (NGINX_PORT=...)"
wait_http() {
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
clk_tck="$(getconf CLK_TCK)"
# cpu_ticks, busy_ticks, steal_ticks: bench/lib.sh

# ---------------------------------------------------------------- nginx (origin and reference)
{
  nginx_conf_head "$work" auto
  cat <<EOF
  # logged and buffered like thumbd's request log (bench/run.sh does the same)
  access_log $work/nginx/logs/access.log combined buffer=64k flush=1s;
  sendfile on;
  tcp_nodelay on;
  keepalive_timeout 120s;
  keepalive_requests 1000000;
  open_file_cache max=100 inactive=120s;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    location /src/ { alias $corpus/; }
    location /static/ { alias $work/static/; }
  }
}
EOF
} >"$work/nginx/nginx.conf"
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=("$!")
names=()
while IFS=$'\t' read -r _p _path file _rest; do
  [ "$file" = file ] || names+=("$file")
done <"$corpus/manifest.tsv"
printf '%s\n' "${names[@]}" >"$work/names.txt"
origin="http://127.0.0.1:$NGINX_PORT/src"
wait_http "$origin/${names[0]}" || die "nginx did not come up (see $work/nginx/logs/error.log)"

# ---------------------------------------------------------------- thumbd, the hot thumbnail
thumbd_flags=(--port "$THUMBD_PORT" --workers "$WORKERS" --allow-loopback-sources)
# shellcheck disable=SC2206
[ -n "$THUMBD_EXTRA_ARGS" ] && thumbd_flags+=($THUMBD_EXTRA_ARGS)
log "thumbd ${thumbd_flags[*]}"
"$work/thumbd" "${thumbd_flags[@]}" 2>"$work/thumbd.log" >/dev/null &
thumbd_pid=$!
pids+=("$thumbd_pid")
wait_http "http://127.0.0.1:$THUMBD_PORT/livez" || die "thumbd did not come up (see $work/thumbd.log)"

hot_name="${names[0]}"
hot_path="/thumb?url=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$origin/$hot_name")&w=$HIT_WIDTH"
curl -fsS -o "$work/static/hot.jpg" "http://127.0.0.1:$THUMBD_PORT$hot_path" || die "the hot thumbnail failed (see $work/thumbd.log)"
second="$(curl -fsS -o "$work/hot-again" -D - "http://127.0.0.1:$THUMBD_PORT$hot_path" | tr -d '\r' | awk -F': ' 'tolower($1) == "x-cache" {print $2}')"
[ "$second" = hit ] || die "the second request for the hot thumbnail was not a hit (X-Cache: $second)"
cmp -s "$work/static/hot.jpg" "$work/hot-again" || die "thumbd answered the hot thumbnail with other bytes"
curl -fsS -o "$work/hot-nginx" "http://127.0.0.1:$NGINX_PORT/static/hot.jpg"
cmp -s "$work/static/hot.jpg" "$work/hot-nginx" || die "nginx does not serve thumbd's bytes"
log "hot thumbnail: $hot_name w=$HIT_WIDTH, $(stat -c %s "$work/static/hot.jpg") bytes"

client=(python3 "$here/hit-latency-client.py")

# probe ROUND SIDE PHASE PORT PATH [hit]: one probe run of IDLE_SECONDS or FLOOD_SECONDS; its
# summary goes to raw/ROUND-SIDE-PHASE.json, its samples to raw/ROUND-SIDE-PHASE.samples.
probe() {
  local id="$1-$2-$3" seconds="$IDLE_SECONDS"
  [ "$3" = idle ] || seconds="$FLOOD_SECONDS"
  "${client[@]}" probe "$4" "$5" "$seconds" "$INTERVAL_MS" "$work/raw/$id.samples" "${6:-}" >"$work/raw/$id.json"
}

# loaded ROUND SIDE LOAD_PID PORT PATH [hit]: the probe under load, with the CPU the load got and
# the whole machine's busy CPU (both in cores), and its steal (share), over the probe's window, in
# raw/ROUND-SIDE-load.env. Machine busy well above the load's: other work shared the cores.
loaded() {
  local round="$1" side="$2" load_pid="$3" c0 c1 b0 b1 s0 s1 t0 t1
  sleep "$LEAD"
  c0="$(cpu_ticks "$load_pid")" b0="$(busy_ticks)" s0="$(steal_ticks)" t0="$(date +%s.%N)"
  probe "$round" "$side" load "$4" "$5" "${6:-}"
  c1="$(cpu_ticks "$load_pid")" b1="$(busy_ticks)" s1="$(steal_ticks)" t1="$(date +%s.%N)"
  python3 -c 'import sys; c, b, s, t, hz, n = map(float, sys.argv[1:]); print(f"load_cores={c / hz / t:.2f}\nbusy_cores={b / hz / t:.2f}\nsteal={s / hz / t / n:.2f}")' \
    "$((c1 - c0))" "$((b1 - b0))" "$((s1 - s0))" "$(echo "$t1 - $t0" | bc)" "$clk_tck" "$(nproc)" >"$work/raw/$round-$side-load.env"
}

# The load's own time limit is only a safety net: it is stopped as soon as the probe is done
# (a busy machine can start the probe late).
load_seconds=$((LEAD + FLOOD_SECONDS + 120))
for round in $(seq "$ROUNDS"); do
  log "round $round: thumbd idle (${IDLE_SECONDS}s)"
  echo "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" >"$work/raw/$round-thumbd-before.env"
  probe "$round" thumbd idle "$THUMBD_PORT" "$hot_path" hit
  log "round $round: thumbd under $FLOOD_CLIENTS clients of cold misses (${FLOOD_SECONDS}s)"
  "${client[@]}" flood "$THUMBD_PORT" "$origin" "$work/names.txt" "$(date +%s)-$round" "$FLOOD_CLIENTS" "$load_seconds" \
    >"$work/raw/$round-flood.json" &
  flood_pid=$!
  pids+=("$flood_pid")
  # thumbd is the load here: its CPU over the probe's window, the probe's own answers included
  loaded "$round" thumbd "$thumbd_pid" "$THUMBD_PORT" "$hot_path" hit
  kill -TERM "$flood_pid"
  wait "$flood_pid" || die "the flood client failed"
  # every thread's name and nice value (field 19 of /proc/PID/task/TID/stat), after the flood
  for task in /proc/"$thumbd_pid"/task/*; do
    stat="$(cat "$task/stat" 2>/dev/null)" || continue
    printf '%s\t%s\n' "$(cat "$task/comm")" "$(awk '{print $17}' <<<"${stat##*) }")"
  done >"$work/raw/$round-threads.tsv"

  log "round $round: nginx idle (${IDLE_SECONDS}s)"
  echo "loadavg=$(cut -d' ' -f1-3 /proc/loadavg)" >"$work/raw/$round-nginx-before.env"
  probe "$round" nginx idle "$NGINX_PORT" /static/hot.jpg
  log "round $round: nginx while the libvips floor burns $WORKERS threads (${FLOOD_SECONDS}s)"
  nice -n "$BURN_NICE" "$work/floor" --corpus "$corpus" --threads "$WORKERS" --seconds "$load_seconds" \
    >"$work/raw/$round-floor.out" 2>"$work/raw/$round-floor.err" &
  floor_pid=$!
  pids+=("$floor_pid")
  loaded "$round" nginx "$floor_pid" "$NGINX_PORT" /static/hot.jpg
  kill -0 "$floor_pid" 2>/dev/null || die "the floor ended before the probe (see $work/raw/$round-floor.err)"
  # The floor has no signal handler: stopped, it prints nothing; its CPU is in the load's figures.
  stop_pid "$floor_pid"
done
kill -0 "$thumbd_pid" 2>/dev/null || die "thumbd is gone (see $work/thumbd.log)"

# ---------------------------------------------------------------- report
stamp="$(date -u +%Y%m%dT%H%M%SZ)"
report="$here/results/hit-latency-$stamp.md"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$root" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || commit="$commit (+ uncommitted changes in Sources/)"
{
  echo "stamp=$stamp"
  echo "rounds=$ROUNDS"
  echo "commit=$commit"
  echo "thumbd_flags=${thumbd_flags[*]}"
  echo "hot=$hot_name w=$HIT_WIDTH, $(stat -c %s "$work/static/hot.jpg") bytes"
  echo "interval_ms=$INTERVAL_MS"
  echo "idle_seconds=$IDLE_SECONDS"
  echo "flood_seconds=$FLOOD_SECONDS"
  echo "flood_clients=$FLOOD_CLIENTS"
  echo "workers=$WORKERS"
  echo "burn_nice=$BURN_NICE"
  echo "machine=$(nproc) cores, $(uname -sr), $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
} >"$work/raw/meta.env"
python3 - "$work/raw" >"$report" <<'EOF'
import glob, json, math, os, sys
raw = sys.argv[1]

def env(path):
    try:
        return dict(line.rstrip("\n").split("=", 1) for line in open(path) if "=" in line)
    except OSError:
        return {}

def pct(values, p):  # nearest rank, as the probe computes it
    return values[max(0, math.ceil(p / 100 * len(values)) - 1)] if values else None

def samples(pattern):  # every sample of the matching runs, in ms, sorted
    out = []
    for path in glob.glob(os.path.join(raw, pattern)):
        out += [int(v) / 1000 for v in open(path).read().split()]
    return sorted(out)

def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"

def ratio(a, b):
    return None if a is None or not b else a / b

meta = env(os.path.join(raw, "meta.env"))
rounds = int(meta["rounds"])
phases = [("thumbd", "idle", "idle"), ("thumbd", "load", f"{meta['flood_clients']} clients of cold misses"),
          ("nginx", "idle", "idle"),
          ("nginx", "load", f"libvips floor, {meta['workers']} threads"
                            + (f" at nice {meta['burn_nice']}" if meta["burn_nice"] != "0" else ""))]
print(f"# Hit latency under a flood of misses ({meta['stamp']})\n")
print(f"thumbd `{meta['commit']}` (`{meta['thumbd_flags']}`); hot thumbnail {meta['hot']}. A probe GET every "
      f"{meta['interval_ms']} ms on one keep-alive connection, {meta['idle_seconds']} s idle and "
      f"{meta['flood_seconds']} s under load per phase, {rounds} round(s); {meta['machine']}. "
      "Command: `bench/hit-latency.sh`. Load CPU: thumbd's during its flood, the floor's during the burn; "
      "machine: all busy CPU meanwhile, ours and anyone else's (both in cores); steal: the share of the "
      "machine's time the hypervisor gave to others.\n")
print("| round | side | load | requests | errors | not hit | skipped | p50 ms | p90 ms | p99 ms | max ms "
      "| load CPU | machine | steal | loadavg before |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
p99 = {}
for r in range(1, rounds + 1):
    for side, phase, load in phases:
        try:
            s = json.load(open(os.path.join(raw, f"{r}-{side}-{phase}.json")))
        except (OSError, ValueError):
            s = {}
        e = env(os.path.join(raw, f"{r}-{side}-load.env")) if phase == "load" else {}
        before = env(os.path.join(raw, f"{r}-{side}-before.env")).get("loadavg", "") if phase == "idle" else ""
        p99[(r, side, phase)] = s.get("p99_ms")
        cells = [s.get(k, "n/a") for k in ("requests", "errors")]
        cells.append(s.get("not_hit", "n/a") if side == "thumbd" else "-")
        cells += [s.get(k, "n/a") for k in ("skipped", "p50_ms", "p90_ms", "p99_ms", "max_ms")]
        cells += [e.get("load_cores", ""), e.get("busy_cores", ""), e.get("steal", ""), before]
        print(f"| {r} | {side} | {load} | " + " | ".join(str(c) for c in cells) + " |")
print("\nAll rounds together (every sample of a phase):\n")
print("| side | load | requests | p50 ms | p90 ms | p99 ms | max ms |")
print("|---|---|---|---|---|---|---|")
pooled = {}
for side, phase, load in phases:
    v = samples(f"*-{side}-{phase}.samples")
    pooled[(side, phase)] = pct(v, 99)
    print(f"| {side} | {load} | {len(v)} | {fmt(pct(v, 50))} | {fmt(pct(v, 90))} | {fmt(pct(v, 99))} | "
          f"{fmt(v[-1] if v else None)} |")
load_ratio = ratio(pooled[("thumbd", "load")], pooled[("nginx", "load")])
idle_ratio = ratio(pooled[("thumbd", "idle")], pooled[("nginx", "idle")])
per_round = [ratio(p99[(r, "thumbd", "load")], p99[(r, "nginx", "load")]) for r in range(1, rounds + 1)]
verdict = "n/a" if load_ratio is None else ("**pass**" if load_ratio <= 0.5 else "**FAIL**")
print(f"\n- **p99 under load, thumbd / nginx: {fmt(load_ratio, 2)}** (per round: "
      f"{', '.join(fmt(x, 2) for x in per_round)}); target <= 0.5: {verdict}")
print(f"- p99 idle, thumbd / nginx: {fmt(idle_ratio, 2)}")
for r in range(1, rounds + 1):
    try:
        flood = json.load(open(os.path.join(raw, f"{r}-flood.json")))
        print(f"- round {r}: the flood got {flood['images']} thumbnails in {flood['seconds']} s "
              f"(statuses {flood['statuses']})")
    except (OSError, ValueError, KeyError):
        print(f"- round {r}: the flood's output is missing")
threads = {}
for line in open(os.path.join(raw, f"{rounds}-threads.tsv")):
    comm, nice = line.rstrip("\n").split("\t")
    key = comm.rstrip("0123456789") + ("N" if comm[-1:].isdigit() else "")
    threads[(key, nice)] = threads.get((key, nice), 0) + 1
print("- thumbd's threads after the flood (name: nice value × count): "
      + "; ".join(f"{k}: {n} × {c}" for (k, n), c in sorted(threads.items())))
EOF
cat "$report" >&2
log "report: $report"

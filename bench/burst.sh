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
# ANIMATED=1 (issue 37): the burst is COUNT (default 48) different *animated* sources instead, made
# once into bench/work/burst-animated/ from the corpus photographs as bench/animated.sh makes its
# own (anim_strip in lib.sh: panning, zooming and diagonal crops, 30-120 frames of 480-800 px,
# per-frame delays): one animation per corpus JPEG (eight recipes, cycled), every fourth of them an
# animated WebP (800x600x120 or 640x640x96), the rest GIFs; each further source of a photo is a
# variant of its animation (mirrored, upside down, turned, darker), saved anew. Every source is
# checked to be within thumbd's defaults (--max-frames 256, --max-source-pixels 75000000 counting
# every frame, --max-source-bytes 32 MiB; a GIF over 31 MiB loses the second half of its frames
# until it fits), so none is answered with its first frame for a cap. Asked at w=300: a GIF in
# its own format (animated GIF), every third GIF with format=webp (animated WebP), a WebP as WebP.
# Same flags, the same checks, and one more: every 200 is the animation asked for (its
# Content-Type, no X-Thumbd-First-Frame, as many frames as the source: vipsheader). The report
# adds the sources, the formats asked for and the burst's duration.
#
#   bench/burst.sh                     # full: 66 images (~1.6 GB on disk, a few minutes to make once)
#   COUNT=3 bench/burst.sh             # smoke run: the figures mean nothing
#   ANIMATED=1 bench/burst.sh          # 48 animated sources (~0.7 GB, a few minutes to make once)
#   ANIMATED=1 COUNT=4 MIX=20 bench/burst.sh   # animated smoke run
#   THUMBD_BIN=.build/debug/thumbd ... # use an already built binary instead of a release build
#   MAKE_ONLY=1 ...                    # make the images (e.g. while thumbd builds), then stop
#
# Knobs: COUNT, MIX (200), ANIMATED (0), SIDE (5200, JPEG mode), CACHE_BYTES (256M), WORK_BYTES
# (512M), MAKE_JOBS (cores: animations made at once), MAKE_ONLY (0), NGINX_PORT (18093),
# THUMBD_PORT (18094), CORPUS, THUMBD_BIN.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/burst-run"
ANIMATED="${ANIMATED:-0}"
images="$here/work/burst$([ "$ANIMATED" = 1 ] && echo -animated || true)"
COUNT="${COUNT:-$([ "$ANIMATED" = 1 ] && echo 48 || echo 66)}"
MAKE_JOBS="${MAKE_JOBS:-$(nproc)}"
MAKE_ONLY="${MAKE_ONLY:-0}"
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
# burst_files[i]: what client i asks for (under $images), burst_query[i]: its query beyond w=300.
burst_files=()
burst_query=()
mapfile -t sources < <(printf '%s\n' "$corpus"/*.jpg | sort)
if [ "$ANIMATED" != 1 ]; then
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
  for i in $(seq 0 $((COUNT - 1))); do burst_files+=("burst-$i.jpg"); burst_query+=(""); done
else
  # FRAME_W FRAME_H FRAMES KIND DELAYS: base animation b (of corpus photo b) takes recipe b % 8
  # and is an animated WebP when b % 4 == 3 (recipes 3 and 7: the WebP loader decodes every frame
  # into memory of its own), a GIF otherwise. Within the caps: at most 120 frames and 57.6 MP.
  anim_recipes=(
    "800 600 60 pan 40,40,80"
    "640 480 120 zoom 30,30,60"
    "720 480 90 diagonal 50"
    "800 600 120 pan 40"
    "480 480 120 pan 30,60"
    "800 450 100 diagonal 40,40,80"
    "600 400 30 zoom 100,150"
    "640 640 96 zoom 40"
  )
  bases=$((COUNT < ${#sources[@]} ? COUNT : ${#sources[@]}))
  max_gif=$((31 << 20))
  anim_name() { # INDEX -> the file name of source INDEX (base INDEX % bases)
    local b=$(($1 % bases)) fw fh frames
    read -r fw fh frames _ <<<"${anim_recipes[$((b % 8))]}"
    echo "anim-$1-${fw}x${fh}x${frames}.$([ $((b % 4)) = 3 ] && echo webp || echo gif)"
  }
  # make_base B: base animation B as a strip, then every source made from it (B, B + bases, …),
  # each a variant of the strip saved as GIF or WebP.
  make_base() {
    local b="$1" fw fh frames kind delays format tmp="$work/make-$1" i v src out n todo=()
    read -r fw fh frames kind delays <<<"${anim_recipes[$((b % 8))]}"
    format=gif
    [ $((b % 4)) = 3 ] && format=webp
    for ((i = b; i < COUNT; i += bases)); do [ -s "$images/$(anim_name "$i")" ] || todo+=("$i"); done
    [ ${#todo[@]} -gt 0 ] || return 0
    log "making ${todo[*]}: $kind ${fw}x$fh x $frames frames of $(basename "${sources[$b]}") as $format"
    anim_strip "${sources[$b]}" "$kind" "$fw" "$fh" "$frames" "$delays" 0 "$tmp"
    for i in "${todo[@]}"; do
      v=$((i / bases))
      out="$images/$(anim_name "$i")"
      src="$tmp/strip.v"
      # Mirrored, upside down (the frames run backwards), turned; from the fifth on, darker too.
      case $((v % 4)) in
        1) vips flip "$src" "$tmp/var.v" horizontal; src="$tmp/var.v" ;;
        2) vips flip "$src" "$tmp/var.v" vertical; src="$tmp/var.v" ;;
        3) vips rot "$src" "$tmp/var.v" d180; src="$tmp/var.v" ;;
      esac
      if [ "$v" -ge 4 ]; then
        # "--": the offset is negative.
        vips linear --uchar -- "$src" "$tmp/dark.v" 1 $((-8 * (v / 4)))
        src="$tmp/dark.v"
      fi
      anim_set_meta "$src" "$fh" "$delays" 0
      n="$frames"
      while :; do
        if [ "$format" = gif ]; then
          # effort 1: the quantiser's fastest (the sources' own quality is not measured).
          vips gifsave "$src" "$out.tmp" --effort 1
        else
          vips webpsave "$src" "$out.tmp" --Q 80 --effort 0
        fi
        [ "$(stat -c %s "$out.tmp")" -gt "$max_gif" ] && [ "$n" -gt 2 ] || break
        # Over the source cap: keep the first half of the frames.
        n=$((n / 2))
        log "$(basename "$out") is over 31 MiB: keeping its first $n frames"
        vips extract_area "$src" "$tmp/half.v" 0 0 "$fw" $((n * fh))
        anim_set_meta "$tmp/half.v" "$fh" "$delays" 0
        mv "$tmp/half.v" "$tmp/cut.v"
        src="$tmp/cut.v"
      done
      mv "$out.tmp" "$out"
      rm -f "$tmp/var.v" "$tmp/dark.v" "$tmp/cut.v"
    done
    rm -rf "$tmp"
  }
  makers=()
  for b in $(seq 0 $((bases - 1))); do
    if [ ${#makers[@]} -ge "$MAKE_JOBS" ]; then
      wait "${makers[0]}" || die "making an animation failed"
      makers=("${makers[@]:1}")
    fi
    make_base "$b" &
    makers+=("$!")
    pids+=("$!")
  done
  for p in "${makers[@]}"; do wait "$p" || die "making an animation failed"; done
  # Every source within thumbd's default caps, so that none is answered with its first frame for
  # a cap: frames, pixels of every frame together, bytes.
  : >"$work/sources.tsv"
  for i in $(seq 0 $((COUNT - 1))); do
    f="$(anim_name "$i")"
    pages="$(vipsheader -f n-pages "$images/$f" 2>/dev/null || echo 1)"
    fw="$(vipsheader -f width "$images/$f")"
    fh="$(vipsheader -f page-height "$images/$f" 2>/dev/null || vipsheader -f height "$images/$f")"
    size="$(stat -c %s "$images/$f")"
    [ "$pages" -gt 1 ] && [ "$pages" -le 256 ] && [ $((pages * fw * fh)) -le 75000000 ] && [ "$size" -le $((32 << 20)) ] ||
      die "$f is not an animation within the caps: $pages frames of ${fw}x$fh, $size bytes"
    query=""
    [ "${f##*.}" = gif ] && [ $((i % 3)) = 2 ] && query="&format=webp"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$f" "$size" "$pages" "$fw" "$fh" "${query:+webp}" >>"$work/sources.tsv"
    burst_files+=("$f")
    burst_query+=("$query")
  done
fi
total=0
for f in "${burst_files[@]}"; do total=$((total + $(stat -c %s "$images/$f"))); done
log "$COUNT $([ "$ANIMATED" = 1 ] && echo "animated sources" || echo images), $((total / 1048576)) MiB"
[ "$MAKE_ONLY" = 1 ] && exit 0

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
  types { image/jpeg jpg jpeg; image/gif gif; image/webp webp; }
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
burst_start="$(date +%s.%N)"
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
  body=/dev/null
  [ "$ANIMATED" = 1 ] && body="$work/b-$i.out"
  curl -sS -o "$body" -D "$work/h-$i.txt" -w '%{http_code} %{time_total}\n' -m 120 \
    "http://127.0.0.1:$THUMBD_PORT/thumb?url=$(enc "$origin/burst/${burst_files[$i]}")&w=300${burst_query[$i]}" >"$work/s-$i.txt" 2>&1 &
  clients+=("$!")
done
for p in "${clients[@]}"; do wait "$p" 2>/dev/null || true; done
burst_seconds="$(python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$burst_start")"
burst_peak_kb="$(awk '$1 == "VmHWM:" {print $2}' "/proc/$thumbd_pid/status")"
# The frames of every animated answer (an independent decoder: vipsheader).
if [ "$ANIMATED" = 1 ]; then
  for i in $(seq 0 $((COUNT - 1))); do
    frames=0
    [ -s "$work/b-$i.out" ] && frames="$(vipsheader -f n-pages "$work/b-$i.out" 2>/dev/null || echo 1)"
    echo "$frames" >"$work/frames-$i.txt"
  done
fi

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
python3 - "$work" "$COUNT" "$peak_kb" "$base_kb" "$(bytes "$CACHE_BYTES")" "$(bytes "$WORK_BYTES")" "$total" "$MIX" "$burst_peak_kb" "$ANIMATED" "$burst_seconds" \
  "$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" >"$report" <<'PY' || verdict=$?
import glob, os, sys
work, count, peak_kb, base_kb, cache, budget, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
mix, burst_peak_kb, animated, burst_seconds, commit = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10] == "1", sys.argv[11], sys.argv[12]
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
kept_all = True
if not animated:
    print(f"# thumbd burst: {count} different progressive JPEGs at once, then {mix} clients on the corpus\n")
    print(f"- images: {count}, {mib(total):.0f} MiB in all; `--cache-bytes {mib(cache):.0f}M --work-bytes {mib(budget):.0f}M`")
else:
    srcs = [l.rstrip("\n").split("\t") for l in open(f"{work}/sources.tsv")]
    gifs = sum(1 for s in srcs if s[0].endswith(".gif"))
    frames = [int(s[2]) for s in srcs]
    sizes = sorted({f"{s[3]}x{s[4]}" for s in srcs}, key=lambda x: [int(v) for v in x.split("x")])
    mp = [int(s[2]) * int(s[3]) * int(s[4]) / 1e6 for s in srcs]
    print(f"# thumbd burst: {count} different animated sources at once, then {mix} clients on the corpus\n")
    print(f"- `ANIMATED=1 COUNT={count} MIX={mix} bench/burst.sh`, thumbd `{commit}`, {os.cpu_count()} cores")
    print(f"- sources: {count} ({gifs} animated GIFs, {count - gifs} animated WebPs), {mib(total):.0f} MiB in all "
          f"(largest {mib(max(int(s[1]) for s in srcs)):.1f} MiB), {min(frames)}-{max(frames)} frames "
          f"({sum(frames)} in all) of {', '.join(sizes)} px, {min(mp):.1f}-{max(mp):.1f} MP per source counting "
          f"every frame; `--cache-bytes {mib(cache):.0f}M --work-bytes {mib(budget):.0f}M`, thumbd's other defaults")
    asked = {}
    kept, firsts, n200 = 0, {}, 0
    for i, s in enumerate(srcs):
        source = "GIF" if s[0].endswith(".gif") else "WebP"
        want = "webp" if (s[5] == "webp" or source == "WebP") else "gif"
        label = f"{source} → {'WebP' if want == 'webp' else 'GIF'}{' (format=webp)' if s[5] == 'webp' else ''}"
        asked[label] = asked.get(label, 0) + 1
        line = open(f"{work}/s-{i}.txt").read().split()
        if not line or line[0] != "200":
            continue
        n200 += 1
        headers = {}
        for h in open(f"{work}/h-{i}.txt").read().splitlines():
            if ":" in h:
                k, v = h.split(":", 1)
                headers[k.strip().lower()] = v.strip()
        first = headers.get("x-thumbd-first-frame")
        got = int(open(f"{work}/frames-{i}.txt").read().strip() or 0)
        if first:
            firsts[first] = firsts.get(first, 0) + 1
        elif headers.get("content-type") == f"image/{want}" and got == int(s[2]):
            kept += 1
        else:
            firsts[f"{headers.get('content-type')}, {got} of {s[2]} frames"] = firsts.get(
                f"{headers.get('content-type')}, {got} of {s[2]} frames", 0) + 1
    kept_all = kept == n200
    print(f"- asked at w=300: {', '.join(f'{k}: {v}' for k, v in asked.items())}")
    print(f"- the 200s of the burst kept animated, as asked, every frame (Content-Type, no X-Thumbd-First-Frame, "
          f"frames by vipsheader): **{kept} of {n200}**"
          + (f"; otherwise: {', '.join(f'{k}: {v}' for k, v in firsts.items())}" if firsts else "")
          + f"; the burst took {burst_seconds} s")
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
sys.exit(0 if bad == 0 and peak_kb * 1024 <= limit and hot_ok == len(hot) and kept_all else 1)
PY
cat "$report"
exit "$verdict"

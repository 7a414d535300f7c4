#!/usr/bin/env bash
# Animated sources through thumbd against plain `vips thumbnail`, side by side (issue 37): bytes,
# time and frame counts of the same animations thumbnailed to 300 px wide.
#
# The sources are real photographs of the corpus (bench/corpus.sh) animated with the vips CLI:
# panning and zooming crops of 480-800 px, 24-60 frames, with per-frame delays, saved as GIF (three)
# and as animated WebP (one), made once into bench/work/animated-sources/ (gitignored). nginx
# serves them; a release thumbd (its defaults, --allow-loopback-sources) is asked
#   GET /thumb?url=SRC&w=300               (GIF → its default: an animated GIF; WebP → WebP)
#   GET /thumb?url=SRC&w=300&format=webp   (GIF sources only: GIF → animated WebP)
# cold every time (a fresh ?v= tag on the source URL: fetch, decode, resize, encode), and the same
# work is done by `vips thumbnail SRC[n=-1] OUT.gif|OUT.webp 300` with the savers' options thumbd
# uses (VIPS_GIF_SAVE, VIPS_WEBP_SAVE below). RUNS runs each, the two alternating. The vips CLI's
# own start-up (a 1-pixel thumbnail, median of RUNS) is reported and subtracted in its own column.
#
# Reported per source and output: bytes thumbd ÷ vips, median time thumbd ÷ vips (and ÷ vips less
# its start-up), the frame count of both outputs (they must be equal: the run fails otherwise) and
# thumbd's Content-Type and X-Thumbd-First-Frame. Writes bench/results/animated-<UTC>.md.
#
#   bench/animated.sh                  # RUNS=7, about two minutes once the sources are made
#   QUICK=1 bench/animated.sh          # smoke run: RUNS=1, a quarter of the frames; figures mean little
#   THUMBD_BIN=path bench/animated.sh  # a given binary instead of a release build
#
# Knobs: RUNS (7), WIDTH (300), QUICK, THUMBD_EXTRA_ARGS, THUMBD_PORT (18150), NGINX_PORT (18151),
# CORPUS, THUMBD_BIN, SKIP_INSTALL, BUILD_NICE (19), VIPS_GIF_SAVE, VIPS_WEBP_SAVE. All traffic
# stays on 127.0.0.1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
corpus="${CORPUS:-$here/corpus}"
work="$here/work/animated"
QUICK="${QUICK:-0}"
RUNS="${RUNS:-$([ "$QUICK" = 1 ] && echo 1 || echo 7)}"
WIDTH="${WIDTH:-300}"
THUMBD_EXTRA_ARGS="${THUMBD_EXTRA_ARGS:-}"
THUMBD_PORT="${THUMBD_PORT:-18150}"
NGINX_PORT="${NGINX_PORT:-18151}"
THUMBD_BIN="${THUMBD_BIN:-}"
sources="$here/work/animated-sources$([ "$QUICK" = 1 ] && echo -quick || true)"

# >>> The savers' options thumbd uses for animated output — keep in step with
# >>> Sources/Vips/VipsPipeline+Encoding.swift (and its C shim, cvips_gifsave_buffer and
# >>> cvips_webpsave_buffer). webpsave: Q (the request's quality, 80 by default) and strip (thumbd
# >>> also drops what metadata chunks are left: WebPMetadataStripper). gifsave: GIFSettings (effort
# >>> 4, dither 1, bitdepth 8, interframe_maxerror 4, interpalette_maxerror 8) and strip. Checked
# >>> against main at af09b72 (the animation merge).
VIPS_GIF_SAVE="${VIPS_GIF_SAVE:-[effort=4,dither=1,bitdepth=8,interframe-maxerror=4,interpalette-maxerror=8,strip]}"
VIPS_WEBP_SAVE="${VIPS_WEBP_SAVE:-[Q=80,strip]}"
# <<<

name=animated
# shellcheck source=bench/lib.sh
source "$here/lib.sh"

# ---------------------------------------------------------------- install, corpus, build
bench_install
command -v vips >/dev/null || "$root/scripts/setup.sh" libvips-tools
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[ -f "$corpus/manifest.tsv" ] || "$here/corpus.sh"
rm -rf "$work"
mkdir -p "$work/nginx/logs" "$work/nginx/tmp" "$work/raw" "$work/out" "$sources" "$here/results"
binary="release build"
[ -z "$THUMBD_BIN" ] || binary="binary $THUMBD_BIN"
bench_build

# ---------------------------------------------------------------- the animated sources (made once)
# NAME PHOTO KIND FRAME_W FRAME_H FRAMES DELAYS PLAYS FORMAT: KIND pan (left to right), zoom (into
# the centre, to half the side) or diagonal (top left to bottom right); DELAYS in ms, cycled over
# the frames; PLAYS 0 is forever. A photo missing from the corpus is replaced by the corpus's
# JPEGs in manifest order.
recipes=(
  "pan-bridge lomiri-16.04_bridge_by_sander_klootwijk.jpg pan 640 400 40 40,40,40,80 0 gif"
  "zoom-aitzgorri lomiri-16.04_aitzgorri_by_aitzol_berasategi.jpg zoom 480 480 32 60,100 0 gif"
  "diagonal-dune mate_nature_dune.jpg diagonal 800 450 60 30,30,50 3 gif"
  "pan-autumn plasma_autumn_2560x1600.jpg pan 600 400 24 100,150 0 webp"
)
mapfile -t jpegs < <(awk -F'\t' 'NR > 1 && $4 == "jpeg" {print $3}' "$corpus/manifest.tsv")

made=()
index=0
for recipe in "${recipes[@]}"; do
  read -r rname photo kind fw fh frames delays plays format <<<"$recipe"
  [ "$QUICK" = 1 ] && frames=$(((frames + 3) / 4))
  [ -f "$corpus/$photo" ] || photo="${jpegs[$((index % ${#jpegs[@]}))]}"
  index=$((index + 1))
  out="$sources/$rname-${fw}x$fh-${frames}f.$format"
  made+=("$out")
  [ -s "$out" ] && continue
  log "making $(basename "$out") from $photo"
  tmp="$work/make"
  anim_strip "$corpus/$photo" "$kind" "$fw" "$fh" "$frames" "$delays" "$plays" "$tmp"
  if [ "$format" = gif ]; then vips gifsave "$tmp/strip.v" "$out.tmp"; else vips webpsave "$tmp/strip.v" "$out.tmp" --Q 85; fi
  mv "$out.tmp" "$out"
  rm -rf "$tmp"
done

pages() { vipsheader -f n-pages "$1" 2>/dev/null || echo 1; }
for src in "${made[@]}"; do
  [ "$(pages "$src")" -gt 1 ] || die "$src is not animated"
  log "source $(basename "$src"): $(stat -c %s "$src") bytes, $(pages "$src") frames, delays $(vipsheader -f delay "$src")"
done

# ---------------------------------------------------------------- nginx (origin) and thumbd
user_line=""
[ "$(id -u)" -eq 0 ] && user_line="user $(id -un) $(id -gn);"
cat >"$work/nginx/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 256; }
http {
  types { image/gif gif; image/webp webp; }
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
    location /src/ { alias $sources/; }
  }
}
EOF
port_free "$THUMBD_PORT" || die "port $THUMBD_PORT is in use (THUMBD_PORT=...)"
port_free "$NGINX_PORT" || die "port $NGINX_PORT is in use (NGINX_PORT=...)"
"$nginx_bin" -p "$work/nginx" -c "$work/nginx/nginx.conf" &
pids+=("$!")
origin="http://127.0.0.1:$NGINX_PORT/src"
wait_http "$origin/$(basename "${made[0]}")" || die "nginx did not come up (see $work/nginx/logs/error.log)"

thumbd_flags=(--port "$THUMBD_PORT" --allow-loopback-sources)
# shellcheck disable=SC2206
[ -n "$THUMBD_EXTRA_ARGS" ] && thumbd_flags+=($THUMBD_EXTRA_ARGS)
log "thumbd ${thumbd_flags[*]}"
"$work/thumbd" "${thumbd_flags[@]}" 2>"$work/thumbd.log" >/dev/null &
thumbd_pid=$!
pids+=("$thumbd_pid")
wait_http "http://127.0.0.1:$THUMBD_PORT/livez" || die "thumbd did not come up (see $work/thumbd.log)"

# ---------------------------------------------------------------- measure
now_ns() { date +%s%N; }
encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
stamp="$(date -u +%Y%m%dT%H%M%SZ)"

# The vips CLI's start-up: a 1-pixel thumbnail of a 1-pixel PNG, RUNS times.
vips black "$work/one.png" 1 1
for run in $(seq "$RUNS"); do
  t0="$(now_ns)"
  vips thumbnail "$work/one.png" "$work/one-out.png" 1
  echo $(($(now_ns) - t0)) >>"$work/raw/startup.ns"
done

# One line per measurement in raw/runs.tsv: source, output, side, run, ns, bytes, frames,
# content type, first-frame header.
: >"$work/raw/runs.tsv"
for src in "${made[@]}"; do
  base="$(basename "$src")"
  outputs=(webp)
  [ "${base##*.}" = gif ] && outputs=(gif webp)
  for output in "${outputs[@]}"; do
    query="w=$WIDTH"
    [ "$output" = webp ] && [ "${base##*.}" = gif ] && query="$query&format=webp"
    save="$VIPS_GIF_SAVE"
    [ "$output" = webp ] && save="$VIPS_WEBP_SAVE"
    log "$base → $output ($RUNS runs each)"
    for run in $(seq "$RUNS"); do
      # thumbd, cold: a source URL it has never seen.
      file="$work/out/$base.thumbd-$run.$output"
      url="http://127.0.0.1:$THUMBD_PORT/thumb?url=$(encode "$origin/$base?v=$stamp-$output-$run")&$query"
      t0="$(now_ns)"
      code="$(curl -sS -o "$file" -D "$work/out/headers" -w '%{http_code}' "$url")"
      ns=$(($(now_ns) - t0))
      [ "$code" = 200 ] || die "thumbd answered $code for $base ($query): $(head -c 300 "$file")"
      type="$(tr -d '\r' <"$work/out/headers" | awk -F': ' 'tolower($1) == "content-type" {print $2}')"
      first="$(tr -d '\r' <"$work/out/headers" | awk -F': ' 'tolower($1) == "x-thumbd-first-frame" {print $2}')"
      printf '%s\t%s\tthumbd\t%s\t%s\t%s\t%s\t%s\t%s\n' "$base" "$output" "$run" "$ns" "$(stat -c %s "$file")" \
        "$(pages "$file")" "$type" "${first:--}" >>"$work/raw/runs.tsv"
      # plain libvips, the same work from the file
      file="$work/out/$base.vips-$run.$output"
      t0="$(now_ns)"
      vips thumbnail "$src[n=-1]" "$file$save" "$WIDTH" --height 100000 --no-rotate
      ns=$(($(now_ns) - t0))
      printf '%s\t%s\tvips\t%s\t%s\t%s\t%s\t%s\t%s\n' "$base" "$output" "$run" "$ns" "$(stat -c %s "$file")" \
        "$(pages "$file")" "image/$output" "-" >>"$work/raw/runs.tsv"
    done
  done
done
kill -0 "$thumbd_pid" 2>/dev/null || die "thumbd is gone (see $work/thumbd.log)"

# ---------------------------------------------------------------- report
report="$here/results/animated-$stamp.md"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$root" diff --quiet HEAD -- Sources Package.swift 2>/dev/null || commit="$commit (+ uncommitted changes in Sources/)"
{
  echo "stamp=$stamp"
  echo "commit=$commit"
  echo "binary=$binary"
  echo "runs=$RUNS"
  echo "quick=$QUICK"
  echo "width=$WIDTH"
  echo "thumbd_flags=${thumbd_flags[*]}"
  echo "gif_save=$VIPS_GIF_SAVE"
  echo "webp_save=$VIPS_WEBP_SAVE"
  echo "vips=$(vips --version)"
  echo "machine=$(nproc) cores, $(uname -sr), $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
} >"$work/raw/meta.env"
for src in "${made[@]}"; do
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(basename "$src")" "$(stat -c %s "$src")" "$(pages "$src")" \
    "$(vipsheader -f width "$src")" "$(vipsheader -f page-height "$src" 2>/dev/null || vipsheader -f height "$src")" \
    "$(vipsheader -f delay "$src" | tr ' ' ',' | sed 's/,$//')"
done >"$work/raw/sources.tsv"
set +e
python3 - "$work/raw" >"$report" <<'EOF'
import statistics, sys
raw = sys.argv[1]
meta = dict(line.rstrip("\n").split("=", 1) for line in open(f"{raw}/meta.env") if "=" in line)
startup = statistics.median(int(v) for v in open(f"{raw}/startup.ns").read().split()) / 1e6
runs = {}
for line in open(f"{raw}/runs.tsv"):
    src, output, side, run, ns, size, frames, ctype, first = line.rstrip("\n").split("\t")
    runs.setdefault((src, output), {}).setdefault(side, []).append(
        dict(ms=int(ns) / 1e6, bytes=int(size), frames=int(frames), type=ctype, first=first))

print(f"# Animated sources: thumbd against `vips thumbnail` ({meta['stamp']})\n")
print(f"thumbd `{meta['commit']}` ({meta['binary']}; `{meta['thumbd_flags']}`), {meta['vips']}; {meta['machine']}. "
      f"Command: `{'QUICK=1 ' if meta['quick'] == '1' else ''}bench/animated.sh`"
      f"{' (smoke run: the figures mean little)' if meta['quick'] == '1' else ''}. "
      f"Each output {meta['runs']} time(s) per side, alternating; times are medians. thumbd: "
      f"`GET /thumb?url=…&w={meta['width']}` (`&format=webp` for GIF → WebP), cold (a new source URL each time: "
      f"fetch from nginx on 127.0.0.1, decode, resize, encode), timed by the client. vips: "
      f"`vips thumbnail SRC[n=-1] OUT{{.gif{meta['gif_save']},.webp{meta['webp_save']}}} {meta['width']} "
      f"--height 100000 --no-rotate`, its wall time; the vips CLI's start-up (a 1-px thumbnail) is "
      f"{startup:.1f} ms, taken off in the last time column.\n")
print("Sources (real photographs of the bench corpus, animated with the vips CLI):\n")
print("| source | bytes | frames | size | delays ms |")
print("|---|---|---|---|---|")
for line in open(f"{raw}/sources.tsv"):
    name, size, frames, width, height, delays = line.rstrip("\n").split("\t")
    shown = delays if len(delays) <= 40 else delays[:37] + "…"
    print(f"| {name} | {int(size):,} | {frames} | {width} × {height} | {shown} |")
print("\n| source | output | thumbd type | first-frame header | frames thumbd / vips | bytes thumbd | bytes vips "
      "| bytes ÷ | ms thumbd | ms vips | time ÷ | time ÷ (vips less start-up) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
failures = []
for (src, output), sides in runs.items():
    t, v = sides["thumbd"], sides["vips"]
    tb, vb = statistics.median(r["bytes"] for r in t), statistics.median(r["bytes"] for r in v)
    tm, vm = statistics.median(r["ms"] for r in t), statistics.median(r["ms"] for r in v)
    tf, vf = sorted({r["frames"] for r in t}), sorted({r["frames"] for r in v})
    ok = tf == vf and len(tf) == 1
    if not ok:
        failures.append(f"{src} → {output}: thumbd {tf} frames, vips {vf}")
    net = vm - startup
    print(f"| {src} | {output} | {t[0]['type']} | {t[0]['first']} | {'/'.join(map(str, tf))} / "
          f"{'/'.join(map(str, vf))}{'' if ok else ' **differ**'} | {tb:,.0f} | {vb:,.0f} | {tb / vb:.2f} | "
          f"{tm:.1f} | {vm:.1f} | {tm / vm:.2f} | {tm / net if net > 0 else float('nan'):.2f} |")
print()
if failures:
    print("**Frame counts differ** — " + "; ".join(failures))
else:
    print("Frame counts: thumbd's and vips' outputs agree for every source and output.")
sys.exit(1 if failures else 0)
EOF
verdict=$?
set -e
cat "$report" >&2
log "report: $report"
[ "$verdict" = 0 ] || die "frame counts differ (see the report)"

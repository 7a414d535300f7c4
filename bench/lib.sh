# shellcheck shell=bash
# shellcheck disable=SC2154  # name, work and root are set by the sourcing script (below)
# Sourced by the bench scripts that start their own nginx and thumbd (burst.sh, soak.sh,
# replay.sh, hit-latency.sh, animated.sh): logging, stopping what they started (also on failure or
# Ctrl-C), installing what is missing, one release build, making animations from photographs. The sourcing script sets `name` (its log prefix), `here` (bench/),
# `root` (the repository), `work` (its work directory) and `THUMBD_BIN` (empty: build), and
# appends every background pid it starts to `pids`.

log() { printf '[%s %s] %s\n' "$name" "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
# true when nothing listens on 127.0.0.1:PORT
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# waits up to 10 s for URL to answer 2xx
wait_http() {
  for _ in $(seq 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
# cpu_ticks, busy_ticks, steal_ticks, nginx_conf_head
# shellcheck source=bench/common.sh
source "$here/common.sh"

# "256M" -> bytes
bytes() { python3 -c 'import sys; s=sys.argv[1].upper(); m={"K":10,"M":20,"G":30}; print(int(s[:-1])<<m[s[-1]] if s[-1] in m else int(s))' "$1"; }

# thumbd's glibc malloc settings: the scripts start thumbd (only) with
# GLIBC_TUNABLES="$thumbd_glibc_tunables".
# shellcheck source=scripts/glibc-tunables.sh
source "$root/scripts/glibc-tunables.sh"

pids=()
# TERM, up to 5 s, then KILL.
stop_pid() {
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do stop_pid "$p"; done
  [ "$rc" = 0 ] || log "failed (exit $rc); logs in $work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Installs curl, python3 and nginx when missing (with sudo when not root), and the build
# dependencies unless a binary is given; SKIP_INSTALL=1 skips it all.
bench_install() {
  [ "${SKIP_INSTALL:-0}" != 1 ] || return 0
  local sudo="" missing=()
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  command -v curl >/dev/null || missing+=(curl)
  command -v python3 >/dev/null || missing+=(python3)
  if ! command -v nginx >/dev/null && ! [ -x /usr/sbin/nginx ]; then
    if apt-cache show --no-all-versions nginx-light >/dev/null 2>&1; then missing+=(nginx-light); else missing+=(nginx); fi
  fi
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -q >/dev/null
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
  [ -n "$THUMBD_BIN" ] || "$root/scripts/setup.sh"
}

# Builds thumbd in release mode at niceness BUILD_NICE (19) unless THUMBD_BIN names a binary,
# and copies it to $work/thumbd, so that a concurrent build cannot swap it under the run.
bench_build() {
  if [ -z "$THUMBD_BIN" ]; then
    log "swift build -c release --product thumbd (nice ${BUILD_NICE:-19})"
    (cd "$root" && nice -n "${BUILD_NICE:-19}" swift build -c release --product thumbd >"$work/build.log" 2>&1) ||
      die "build failed (see $work/build.log)"
    THUMBD_BIN="$(cd "$root" && swift build -c release --show-bin-path)/thumbd"
  fi
  [ -x "$THUMBD_BIN" ] || die "no thumbd binary at $THUMBD_BIN"
  cp "$THUMBD_BIN" "$work/thumbd"
}

# ---------------------------------------------------------------- animations (animated.sh, burst.sh)
# anim_set_meta FILE.v PAGE_HEIGHT DELAYS PLAYS: writes page-height, n-pages, delay (one per page)
# and loop into the metadata of a .v image. The vips CLI has no operation that sets metadata; the
# savers take them from there (gifsave and webpsave read delay and loop, every saver page-height).
# A .v file is its header and pixels followed by an XML block of the metadata, which is rewritten.
anim_set_meta() {
  python3 - "$@" <<'PY'
import re, struct, sys
path, page_height, delays, plays = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4]
data = open(path, "rb").read()
width, height, bands, _, band_format = struct.unpack("<iiiii", data[4:24])
sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 8, 8: 8, 9: 16}  # uchar char ushort ... dpcomplex
end = 64 + width * height * bands * sizes[band_format]
xml = data[end:].decode()
pages = height // page_height
fields = {"page-height": ("gint", str(page_height)), "n-pages": ("gint", str(pages)), "loop": ("gint", plays),
          "delay": ("VipsArrayInt", " ".join(delays[i % len(delays)] for i in range(pages)) + " ")}
for name in fields:
    xml = re.sub(r'\s*<field type="[^"]*" name="%s">[^<]*</field>' % re.escape(name), "", xml)
added = "".join(f'\n    <field type="{t}" name="{n}">{v}</field>' for n, (t, v) in fields.items())
if "<meta>" in xml:
    xml = xml.replace("<meta>", "<meta>" + added, 1)
else:
    xml = re.sub(r"\s*<meta\s*/>", "", xml).replace("</root>", f"  <meta>{added}\n  </meta>\n</root>")
open(path, "wb").write(data[:end] + xml.encode())
PY
}

# anim_strip PHOTO KIND FRAME_W FRAME_H FRAMES DELAYS PLAYS DIR: a photograph animated with the
# vips CLI into DIR/strip.v (DIR is emptied first), the frames stacked top to bottom with the
# animation's metadata (anim_set_meta), ready for gifsave or webpsave. KIND pan (left to right),
# zoom (into the centre, to half the side) or diagonal (top left to bottom right); DELAYS in ms,
# cycled over the frames; PLAYS 0 is forever.
anim_strip() {
  local photo="$1" kind="$2" fw="$3" fh="$4" frames="$5" delays="$6" plays="$7" tmp="$8"
  local bw bh i x y side list=()
  rm -rf "$tmp"
  mkdir -p "$tmp"
  # The photo at twice the frame's width (the pan and the diagonal move over the rest).
  vips thumbnail "$photo" "$tmp/base.v" $((fw * 2)) --height $((fh * 3)) --size down
  bw="$(vipsheader -f width "$tmp/base.v")"
  bh="$(vipsheader -f height "$tmp/base.v")"
  [ "$bw" -gt "$fw" ] && [ "$bh" -ge "$fh" ] || die "$photo is too small or too tall for $fw × $fh frames"
  for i in $(seq 0 $((frames - 1))); do
    case "$kind" in
      pan) x=$((i * (bw - fw) / (frames - 1))) y=$(((bh - fh) / 2))
        vips crop "$tmp/base.v" "$tmp/f$i.tif" "$x" "$y" "$fw" "$fh" ;;
      diagonal) x=$((i * (bw - fw) / (frames - 1))) y=$((i * (bh - fh) / (frames - 1)))
        vips crop "$tmp/base.v" "$tmp/f$i.tif" "$x" "$y" "$fw" "$fh" ;;
      zoom)
        # A centred square from the whole height down to half of it, scaled to the frame.
        side=$((bh - i * bh / 2 / (frames - 1)))
        vips crop "$tmp/base.v" "$tmp/c.v" $(((bw - side) / 2)) $(((bh - side) / 2)) "$side" "$side"
        vips thumbnail "$tmp/c.v" "$tmp/f$i.tif" "$fw" --height "$fh" --size force ;;
      *) die "unknown kind $kind" ;;
    esac
    list+=("$tmp/f$i.tif")
  done
  # Frames as TIFF: 8.14.1's arrayjoin crashes on three or more .v inputs.
  vips arrayjoin "${list[*]}" "$tmp/strip.v" --across 1
  rm -f "${list[@]}" "$tmp/base.v" "$tmp/c.v"
  anim_set_meta "$tmp/strip.v" "$fh" "$delays" "$plays"
}

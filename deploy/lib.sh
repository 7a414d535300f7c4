# Sourced by deploy/test-systemd.sh, deploy/test-nginx.sh and examples/gallery/test.sh: on top of
# bench/lib.sh (log, die, stopping every pid in `pids` on exit, the release build), a free port,
# waiting for a URL, the source images and the loopback origin that serves them. The sourcing
# script sets `name`, `root` (the repository) and `work` (its temporary directory, removed on
# exit) before sourcing.
here="$root/bench"
THUMBD_BIN="${THUMBD_BIN:-}"
# shellcheck source=../bench/lib.sh
. "$root/bench/lib.sh"
# bench/lib.sh's cleanup, then the work directory (KEEP_WORK=1 keeps it, for the logs).
deploy_cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do stop_pid "$p"; done
  if [ "$rc" != 0 ]; then
    log "failed (exit $rc); logs in $work"
  elif [ "${KEEP_WORK:-0}" != 1 ]; then
    rm -rf "$work"
  fi
  exit "$rc"
}
trap deploy_cleanup EXIT

fail=0
check() { # check DESCRIPTION COMMAND...: runs it, prints PASS/FAIL, remembers a failure
  if "${@:2}"; then log "PASS $1"; else log "FAIL $1"; fail=1; fi
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_for URL [STATUS]: up to 30 s for URL to answer STATUS (200).
wait_for() {
  for _ in $(seq 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = "${2:-200}" ] && return 0
    sleep 0.1
  done
  die "$1 did not answer ${2:-200} within 30 s"
}

# make_sources DIR: synthetic 1200x800 sources, one per decoder thumbd takes (JPEG, PNG, WebP,
# GIF, AVIF, TIFF), plus a PNG with alpha. Made with the vips CLI, so they cost no repository space.
make_sources() {
  local dir="$1" t="$1/.tmp"
  mkdir -p "$t"
  vips gaussnoise "$t/noise.v" 1200 800 --mean 128 --sigma 30
  vips gaussblur "$t/noise.v" "$t/blur.v" 6
  vips cast "$t/blur.v" "$t/grey.v" uchar
  vips xyz "$t/xy.v" 1200 800
  vips linear "$t/xy.v" "$t/xy8.v" "0.2 0.3" "0 0" --uchar
  vips bandjoin "$t/grey.v $t/xy8.v" "$t/rgb3.v"
  vips copy "$t/rgb3.v" "$t/rgb.v" --interpretation srgb
  vips copy "$t/rgb.v" "$dir/photo.jpg[Q=85]"
  vips copy "$t/rgb.v" "$dir/photo.png"
  vips copy "$t/rgb.v" "$dir/photo.webp[Q=80]"
  vips copy "$t/rgb.v" "$dir/photo.gif"
  vips copy "$t/rgb.v" "$dir/photo.avif[Q=50]"
  vips copy "$t/rgb.v" "$dir/photo.tif"
  vips bandjoin "$t/rgb.v $t/grey.v" "$t/rgba.v"
  vips copy "$t/rgba.v" "$dir/alpha.png"
  rm -rf "$t"
}

# start_origin DIR PORT: a static HTTP origin on 127.0.0.1 serving DIR.
start_origin() {
  python3 -m http.server "$2" --bind 127.0.0.1 --directory "$1" >"$work/origin.log" 2>&1 &
  pids+=($!)
  wait_for "http://127.0.0.1:$2/"
}

# urlencode STRING
urlencode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

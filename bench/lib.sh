# shellcheck shell=bash
# shellcheck disable=SC2154  # name, work and root are set by the sourcing script (below)
# Sourced by the bench scripts that start their own nginx and thumbd (burst.sh, soak.sh,
# replay.sh): logging, stopping what they started (also on failure or Ctrl-C), installing what is
# missing, one release build. The sourcing script sets `name` (its log prefix), `here` (bench/),
# `root` (the repository), `work` (its work directory) and `THUMBD_BIN` (empty: build), and
# appends every background pid it starts to `pids`.

log() { printf '[%s %s] %s\n' "$name" "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }
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

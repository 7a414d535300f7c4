#!/usr/bin/env bash
# Builds deploy/Dockerfile with podman and checks the image on loopback: thumbnails through the
# published port from an origin on the host, the non-root user, the health check, the drain
# (/readyz 503) and a clean exit 0 on SIGTERM, the disk tier on a named volume as
# docs/operations.md runs it (kept across containers, one thumbd per volume); reports build time
# and image size. Run as root from the repository root or anywhere:
#   deploy/test-container.sh
# DEBIAN_MIRROR=http://… picks the mirror the base image is made from (default: this machine's).
# No registry is reachable here, so the two base images the Dockerfile names are made locally when
# podman does not have them: debian:bookworm-slim from a debootstrap root (like the official slim
# image: minbase, no docs, man pages or locales), swift:<version>-bookworm from that plus the
# official image's packages and the installed toolchain copied into /usr (where the official image
# has it). Both stay in podman's store for the next run. Not part of .ci/run: the image build
# compiles thumbd from scratch (several minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { echo "test-container: $*" >&2; }
fail() {
  echo "test-container: FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" -eq 0 ] || fail "run as root (podman builds and runs rootful here)"

./scripts/setup.sh podman runc slirp4netns debootstrap python3 curl

# On this box podman runs containers with Debian's runc and with explicit ulimits: a container
# cannot ask for more than the caller's hard limits, and conmon runs with nproc capped at kernel.pid_max (measured:
# 32768 works, 32769 is refused with "error setting rlimit type 6"), so take the lower.
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
pid_max=$(cat /proc/sys/kernel/pid_max)
[ "$nofile" != unlimited ] || nofile=1048576
if [ "$nproc" = unlimited ] || [ "$nproc" -gt "$pid_max" ]; then nproc=$pid_max; fi
podman=(podman --runtime runc)
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
log "podman $(podman version --format '{{.Client.Version}}'), storage $(podman info --format '{{.Store.GraphDriverName}}'), runc, nofile=$nofile nproc=$nproc"

# The base images exactly as the Dockerfile names them (fully qualified, so no short-name lookup).
debian_image=$(awk '$1 == "FROM" && $2 ~ /debian:/ { print $2 }' deploy/Dockerfile)
swift_image=$(awk '$1 == "FROM" && $2 ~ /swift:/ { print $2 }' deploy/Dockerfile)
swift_version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9.]*\).*/\1/p' | head -1)
[ "$swift_image" = "docker.io/library/swift:$swift_version-bookworm" ] \
  || fail "deploy/Dockerfile builds with $swift_image but the toolchain here is $swift_version"

work=$(mktemp -d /var/tmp/thumbd-container.XXXXXX)
containers=()
volume=""
origin_pid=""
cleanup() {
  local status=$?
  # A podman command that failed under `set -e` said why in podman.log.
  [ "$status" -eq 0 ] || [ ! -s "$work/podman.log" ] || tail -5 "$work/podman.log" >&2
  for c in "${containers[@]}"; do "${podman[@]}" rm -f -t 0 "$c" >/dev/null 2>&1 || true; done
  [ -z "$volume" ] || "${podman[@]}" volume rm -f "$volume" >/dev/null 2>&1 || true
  [ -z "$origin_pid" ] || kill "$origin_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The mirror this machine's apt uses (deb822 or one-line sources), unless DEBIAN_MIRROR is set.
host_uris=$(for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
  [ ! -f "$f" ] || cat "$f"
done | awk '$1 == "URIs:" { print $2 } $1 == "deb" { print ($2 ~ /^\[/ ? $3 : $2) }')
mirror=${DEBIAN_MIRROR:-$(grep -v security <<<"$host_uris" | grep '/debian/\?$' | head -1 || true)}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=$(grep '/debian-security/\?$' <<<"$host_uris" | head -1 || true)
security=${security:-${mirror%/debian}/debian-security}
security=${security%/}
if ! "${podman[@]}" image exists "$debian_image"; then
  log "making $debian_image: debootstrap --variant=minbase bookworm from $mirror"
  rootfs=$work/rootfs
  nice -n 5 debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || {
      tail -20 "$work/debootstrap.log" >&2
      fail "debootstrap"
    }
  # What the official image's build (debuerreotype) does, in short: the same apt sources (with
  # security updates), no services started by package installs, apt caches cleaned after every
  # install, and the slim variant's paths left out of every later package too.
  rm -f "$rootfs/etc/apt/sources.list"
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  printf '#!/bin/sh\nexit 101\n' >"$rootfs/usr/sbin/policy-rc.d"
  chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  slim_paths=(/usr/share/doc /usr/share/groff /usr/share/info /usr/share/linda /usr/share/lintian/overrides /usr/share/locale /usr/share/man)
  for p in "${slim_paths[@]}"; do
    echo "path-exclude $p/*"
    [ "$p" = /usr/share/doc ] || rm -rf "${rootfs:?}$p"/*
  done >"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
  # Copyright files stay, as in the official slim image.
  echo 'path-include /usr/share/doc/*/copyright' >>"$rootfs/etc/dpkg/dpkg.cfg.d/docker"
  find "$rootfs/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs"/var/log/*.log "$rootfs"/var/log/apt/* "$rootfs"/tmp/*
  tar --numeric-owner -C "$rootfs" -c . | "${podman[@]}" import --quiet --change 'CMD ["bash"]' - "$debian_image" >/dev/null
  rm -rf "$rootfs"
fi

if ! "${podman[@]}" image exists "$swift_image"; then
  # The toolchain's usr/ (…/usr/bin/swift) goes to /usr, as the official image unpacks its tarball.
  toolchain=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")
  [ -x "$toolchain/bin/swift" ] || fail "cannot find the toolchain's usr/ from $(command -v swift)"
  log "making $swift_image: $debian_image + the official image's packages + $toolchain as /usr"
  cat >"$work/Containerfile.swift" <<EOF
FROM $debian_image
RUN export DEBIAN_FRONTEND=noninteractive && apt-get update -q && apt-get install -y -q \\
    binutils libicu-dev libcurl4-openssl-dev libedit-dev libsqlite3-dev libncurses-dev \\
    libpython3-dev libxml2-dev pkg-config uuid-dev tzdata git gcc libstdc++-12-dev \\
    && rm -rf /var/lib/apt/lists/*
COPY . /usr/
RUN swift --version
EOF
  nice -n 5 "${podman[@]}" build --pull=never --layers=false "${limits[@]}" -f "$work/Containerfile.swift" \
    -t "$swift_image" "$toolchain" >"$work/swift-image.log" 2>&1 \
    || {
      tail -30 "$work/swift-image.log" >&2
      fail "building $swift_image"
    }
fi

# --layers=false: every run is a full build (the time reported is a real one), and no stage's
# layers (~0.5 GiB of .build for the build stage) pile up in the store run after run; the image
# this replaces is removed.
image=localhost/thumbd:test
previous=$("${podman[@]}" image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
log "building $image from deploy/Dockerfile (compiles thumbd; minutes)"
started=$(date +%s)
nice -n 5 "${podman[@]}" build --pull=never --layers=false --format docker "${limits[@]}" \
  -f deploy/Dockerfile -t "$image" . >"$work/build.log" 2>&1 \
  || {
    tail -40 "$work/build.log" >&2
    fail "podman build"
  }
build_seconds=$(($(date +%s) - started))
[ -z "$previous" ] || [ "$previous" = "$("${podman[@]}" image inspect --format '{{.Id}}' "$image")" ] \
  || "${podman[@]}" rmi "$previous" >/dev/null 2>&1 || true
image_bytes=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
base_bytes=$("${podman[@]}" image inspect --format '{{.Size}}' "$debian_image")
mib() { awk -v b="$1" 'BEGIN { printf "%.0f MiB", b / 1048576 }'; }
log "built in ${build_seconds} s; image $(mib "$image_bytes") (base $(mib "$base_bytes"))"

# The image as configured: user, listen address, health check, stop signal.
user=$("${podman[@]}" image inspect --format '{{.Config.User}}' "$image")
[ -n "$user" ] && [ "${user%%:*}" != 0 ] && [ "${user%%:*}" != root ] || fail "image user is '$user'"
"${podman[@]}" image inspect --format '{{json .Config.Env}}' "$image" | grep -q '"THUMBD_HOST=0.0.0.0"' \
  || fail "image does not set THUMBD_HOST=0.0.0.0"
health=$("${podman[@]}" image inspect --format '{{json .Config.Healthcheck}}' "$image")
grep -q '/livez' <<<"$health" || fail "no HEALTHCHECK on /livez in the image: $health"
stop_signal=$("${podman[@]}" image inspect --format '{{.Config.StopSignal}}' "$image")
[ "$stop_signal" = SIGTERM ] || fail "stop signal '$stop_signal'"

# No toolchain in the runtime image: every library the binary needs is there, none is Swift's.
libs=$("${podman[@]}" run --rm "${limits[@]}" --network none --no-healthcheck --entrypoint ldd "$image" \
  /usr/local/bin/thumbd 2>>"$work/podman.log")
! grep -q 'not found' <<<"$libs" || fail "missing libraries: $(grep 'not found' <<<"$libs")"
! grep -q 'libswift\|libFoundation\|libdispatch' <<<"$libs" || fail "the binary links the Swift runtime dynamically"

# podman schedules HEALTHCHECKs with systemd timers; where systemd is not PID 1 (this box) it says
# so on stderr at every start and stop (even with --health-interval disable), which goes to
# podman.log. The check is run by hand below instead.
no_timer=(--health-interval disable)

# The origin: a PNG and a text file on the host's 127.0.0.1. slirp4netns with allow_host_loopback
# shows the host's loopback to the container as 10.0.2.2 (so thumbd needs --allow-private-sources,
# not --allow-loopback-sources), and forwards the published port from the host's 127.0.0.1 to the
# container's own interface: nothing leaves the machine, and a thumbd listening only on 127.0.0.1
# inside would not be reached (checked below).
mkdir "$work/www"
python3 - "$work/www/photo.png" <<'EOF'
import struct, sys, zlib
w, h = 800, 600
rows = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 255 // w, y * 255 // h, (x ^ y) & 255)) for y in range(h))
chunk = lambda kind, data: struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
EOF
echo "not an image" >"$work/www/note.txt"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
origin_port=$(free_port)
python3 -m http.server "$origin_port" --bind 127.0.0.1 --directory "$work/www" >"$work/origin.log" 2>&1 &
origin_pid=$!

# Waits until GET $1 answers 200 (thumbd starting, the origin starting); fails after 30 s.
wait_for() {
  local i
  for i in $(seq 150); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$1")" = 200 ] && return 0
    sleep 0.2
  done
  return 1
}
wait_for "http://127.0.0.1:$origin_port/note.txt" || fail "the origin did not start"

port=$(free_port)
name=thumbd-test-$$
containers+=("$name")
"${podman[@]}" run -d --name "$name" "${limits[@]}" "${no_timer[@]}" --network slirp4netns:allow_host_loopback=true \
  -p "127.0.0.1:$port:8080" -e THUMBD_ALLOW_PRIVATE_SOURCES=true "$image" >/dev/null 2>>"$work/podman.log"
wait_for "http://127.0.0.1:$port/livez" || {
  "${podman[@]}" logs "$name" >&2 || true
  fail "no 200 from /livez through the published port"
}
log "container $name up on 127.0.0.1:$port (origin 127.0.0.1:$origin_port, seen inside as 10.0.2.2)"

who=$("${podman[@]}" exec "$name" sh -c 'echo "$(id -u) $(id -un):$(id -gn)"')
[ "${who%% *}" != 0 ] || fail "thumbd runs as root in the container"
[ "${who#* }" = thumbd:thumbd ] || fail "the image's user and group are not named thumbd: $who"

# Requests through the container. $1: query of /thumb, $2: the published port (default $port);
# prints "status content-type x-cache", leaves the body in $work/body and the headers in $work/head.
fetch() {
  curl -s -o "$work/body" -D "$work/head" -w '%{http_code} %{content_type}' "http://127.0.0.1:${2:-$port}/thumb?$1"
  printf ' %s\n' "$(header x-cache)"
}
# The value of response header $1 (lowercase) in $work/head.
header() { tr -d '\r' <"$work/head" | awk -F': ' -v h="$1" 'tolower($1) == h { print $2 }'; }
# Prints WxH of the PNG or JPEG in $1.
image_size() {
  python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
if b[:8] == b"\x89PNG\r\n\x1a\n":
    print("%dx%d" % struct.unpack(">II", b[16:24]))
elif b[:2] == b"\xff\xd8":
    i = 2
    while b[i] == 0xFF and b[i + 1] not in (0xC0, 0xC1, 0xC2):
        i += 2 + struct.unpack(">H", b[i + 2:i + 4])[0]
    h, w = struct.unpack(">HH", b[i + 5:i + 9])
    print("%dx%d" % (w, h))
else:
    print("unknown")
EOF
}
src="url=http%3A%2F%2F10.0.2.2%3A$origin_port%2Fphoto.png"
got=$(fetch "$src&w=200")
[ "$got" = "200 image/png miss" ] || fail "first thumbnail: $got"
[ "$(image_size "$work/body")" = 200x150 ] || fail "first thumbnail is $(image_size "$work/body"), not 200x150"
got=$(fetch "$src&w=200")
[ "$got" = "200 image/png hit" ] || fail "same thumbnail again: $got"
got=$(fetch "$src&w=120&h=120&fit=cover&format=jpeg")
[ "$got" = "200 image/jpeg miss" ] || fail "JPEG cover thumbnail: $got"
[ "$(image_size "$work/body")" = 120x120 ] || fail "JPEG cover thumbnail is $(image_size "$work/body")"
got=$(fetch "url=http%3A%2F%2F10.0.2.2%3A$origin_port%2Fnote.txt&w=200")
[ "${got% *}" = "415 application/problem+json" ] || fail "text source: $got"
got=$(fetch "$src&w=0")
[ "${got% *}" = "400 application/problem+json" ] || fail "bad width: $got"
log "thumbnails through the container: PNG 200x150 miss then hit, JPEG 120x120 cover, 415 and 400 problem+json"

# The image's HEALTHCHECK, run by podman inside the container (exit 0: healthy).
"${podman[@]}" healthcheck run "$name" >/dev/null || fail "the image's health check fails on a running thumbd"

# SIGTERM (the image's STOPSIGNAL, what `podman stop` sends): thumbd drains for --drain-delay (5 s:
# /readyz 503 while it still serves), then stops within --shutdown-grace (10 s) and exits 0. -t 30
# leaves room for both, so a 137 would mean it hung, not that podman was impatient.
ready=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$port/readyz")
[ "$ready" = 200 ] || fail "/readyz before the stop: $ready"
stop_started=$(date +%s)
"${podman[@]}" stop -t 30 "$name" >/dev/null 2>>"$work/podman.log" &
stopper=$!
while kill -0 "$stopper" 2>/dev/null; do
  ready=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/readyz")
  [ "$ready" != 503 ] || break
  sleep 0.1
done
live=$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/livez")
wait "$stopper" || fail "podman stop failed"
stop_seconds=$(($(date +%s) - stop_started))
[ "$ready $live" = "503 200" ] || fail "during the drain: /readyz $ready and /livez $live, not 503 and 200"
exit_code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
[ "$exit_code" = 0 ] || {
  "${podman[@]}" logs "$name" >&2 || true
  fail "exit status $exit_code after SIGTERM"
}
log "SIGTERM: /readyz 503 and /livez 200 during the drain, exit 0 after ${stop_seconds} s; thumbd's last log line: $("${podman[@]}" logs "$name" 2>&1 | tail -1)"

# Listening on 127.0.0.1 inside would not be reachable: the published-port check above means
# THUMBD_HOST=0.0.0.0 matters (and this check is not vacuous).
loop_port=$(free_port)
loop_name=thumbd-test-loopback-$$
containers+=("$loop_name")
"${podman[@]}" run -d --name "$loop_name" "${limits[@]}" "${no_timer[@]}" --network slirp4netns -p "127.0.0.1:$loop_port:8080" \
  -e THUMBD_HOST=127.0.0.1 "$image" >/dev/null 2>>"$work/podman.log"
for _ in $(seq 50); do
  "${podman[@]}" exec "$loop_name" curl -fs -o /dev/null http://127.0.0.1:8080/livez && break
  sleep 0.2
done
"${podman[@]}" exec "$loop_name" curl -fs -o /dev/null http://127.0.0.1:8080/livez || fail "loopback-only thumbd did not start"
[ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$loop_port/livez")" != 200 ] \
  || fail "a thumbd on 127.0.0.1 inside was reachable through the published port: the 0.0.0.0 check proves nothing"

# The disk tier as docs/operations.md turns it on: `-v VOLUME:/var/cache/thumbd -e
# THUMBD_DISK_CACHE_DIR=/var/cache/thumbd`, the volume new (made by `run`, as in the recipe). It
# must take the owner and mode of the image's folder there (uid 10001, 0700), or thumbd, not root,
# could not write it and would stop at start (exit 2). What one container kept, a new container on
# the same volume answers from: X-Cache disk, the same bytes and ETag, no request to the origin.
volume=thumbd-test-cache-$$
! "${podman[@]}" volume exists "$volume" || fail "volume $volume exists before the test made it"
disk_run=("${podman[@]}" run "${limits[@]}" "${no_timer[@]}" -v "$volume:/var/cache/thumbd"
  -e THUMBD_DISK_CACHE_DIR=/var/cache/thumbd -e THUMBD_ALLOW_PRIVATE_SOURCES=true)
# Starts container $1 on the volume, published on 127.0.0.1:$2; /readyz is 200 once the folder
# is indexed.
start_disk() {
  containers+=("$1")
  "${disk_run[@]}" -d --name "$1" --network slirp4netns:allow_host_loopback=true -p "127.0.0.1:$2:8080" \
    "$image" >/dev/null 2>>"$work/podman.log"
  wait_for "http://127.0.0.1:$2/readyz" || {
    "${podman[@]}" logs "$1" >&2 || true
    fail "$1 with THUMBD_DISK_CACHE_DIR on volume $volume: no 200 from /readyz"
  }
}
# Prints the value of the unlabelled metric $2 of the thumbd on port $1.
metric() { curl -s -m 5 "http://127.0.0.1:$1/metrics" | awk -v m="$2" '$1 == m { print $2 }'; }
# Stops container $1 with SIGTERM (what `podman stop` sends) and checks it exits 0: the disk writer
# finishes its queue before thumbd exits.
stop_disk() {
  "${podman[@]}" stop -t 30 "$1" >/dev/null 2>>"$work/podman.log" || fail "podman stop $1 failed"
  local code
  code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$1")
  [ "$code" = 0 ] || {
    "${podman[@]}" logs "$1" >&2 || true
    fail "$1: exit status $code after SIGTERM"
  }
}
# Requests for the photo the python origin logged ("GET /photo.png …", conditional ones too).
origin_gets() { grep -c '"GET /photo.png ' "$work/origin.log" || true; }
disk_queries=("$src&w=200" "$src&w=120&h=120&fit=cover&format=jpeg" "$src&w=320&format=webp")

disk_port=$(free_port)
disk_name=thumbd-test-disk-$$
gets_before=$(origin_gets)
start_disk "$disk_name" "$disk_port"
mountpoint=$("${podman[@]}" volume inspect --format '{{.Mountpoint}}' "$volume")
owner=$(stat -c '%u:%g %a' "$mountpoint")
[ "$owner" = "10001:10001 700" ] || fail "new volume $volume is $owner (uid:gid mode), not the image folder's 10001:10001 700"
i=0
for q in "${disk_queries[@]}"; do
  got=$(fetch "$q" "$disk_port")
  [ "${got%% *}" = 200 ] && [ "${got##* }" = miss ] || fail "disk container, first request for $q: $got"
  cp "$work/body" "$work/disk$i.body"
  header etag >"$work/disk$i.etag"
  [ -s "$work/disk$i.etag" ] || fail "no ETag for $q"
  i=$((i + 1))
done
gets_first=$(($(origin_gets) - gets_before))
[ "$gets_first" -ge 1 ] || fail "the origin logged no request for photo.png: the no-request check below would prove nothing"
# The writes are off the request path: wait for the writer to have emptied its queue.
for _ in $(seq 150); do
  queue=$(metric "$disk_port" thumbd_disk_cache_write_queue)
  writes=$(metric "$disk_port" thumbd_disk_cache_writes_total)
  [ "$queue" != 0 ] || [ "${writes:-0}" -lt 1 ] || break
  sleep 0.2
done
[ "$queue" = 0 ] && [ "${writes:-0}" -ge 1 ] || fail "disk writes did not settle in 30 s: write_queue '$queue', writes_total '$writes'"
failures=$(metric "$disk_port" thumbd_disk_cache_write_failures_total)
[ "$failures" = 0 ] || fail "disk write failures: $failures"
log "disk tier on new volume $volume ($owner): ${#disk_queries[@]} thumbnails (PNG, JPEG, WebP), $gets_first origin request(s), $writes disk writes, queue 0"

# One thumbd per folder: a second container on the volume while the first runs must refuse to start
# (the folder's flock reaches across containers: both mount the same directory of the host).
second_status=0
containers+=("thumbd-test-disk2-$$")
"${disk_run[@]}" --rm --name "thumbd-test-disk2-$$" --network none "$image" >"$work/second.out" 2>"$work/second.err" \
  || second_status=$?
[ "$second_status" = 2 ] || {
  cat "$work/second.err" >&2
  fail "a second thumbd on volume $volume in use: exit status $second_status, not 2"
}
in_use=$(grep 'disk cache folder /var/cache/thumbd is in use' "$work/second.err" || true)
[ -n "$in_use" ] || {
  cat "$work/second.err" >&2
  fail "a second thumbd on volume $volume in use: no line saying the folder is in use"
}
[ "$(curl -s -o /dev/null -m 5 -w '%{http_code}' "http://127.0.0.1:$disk_port/readyz")" = 200 ] \
  || fail "the first disk container stopped answering after the refused second one"
log "second container on the volume in use: exit 2, \"$in_use\""

stop_disk "$disk_name"
restart_port=$(free_port)
restart_name=thumbd-test-disk-restart-$$
gets_before=$(origin_gets)
start_disk "$restart_name" "$restart_port"
i=0
for q in "${disk_queries[@]}"; do
  got=$(fetch "$q" "$restart_port")
  [ "${got%% *}" = 200 ] && [ "${got##* }" = disk ] || fail "new container on the volume, $q: $got, not 200 … disk"
  cmp -s "$work/body" "$work/disk$i.body" || fail "new container on the volume, $q: other bytes than before the restart"
  [ "$(header etag)" = "$(cat "$work/disk$i.etag")" ] \
    || fail "new container on the volume, $q: ETag $(header etag), was $(cat "$work/disk$i.etag")"
  got=$(fetch "$q" "$restart_port")
  [ "${got##* }" = hit ] || fail "new container on the volume, $q again: $got, not a memory hit"
  i=$((i + 1))
done
gets_restart=$(($(origin_gets) - gets_before))
[ "$gets_restart" = 0 ] || fail "the new container on the volume asked the origin $gets_restart time(s)"
opened=$("${podman[@]}" logs "$restart_name" 2>&1 | sed -n 's/.*event=disk-cache msg="\([^"]*\)".*/\1/p' | head -1)
stop_disk "$restart_name"
"${podman[@]}" rm "$disk_name" "$restart_name" >/dev/null 2>>"$work/podman.log"
"${podman[@]}" volume rm "$volume" >/dev/null 2>>"$work/podman.log" || fail "podman volume rm $volume"
volume=""
log "new container on the same volume: ${#disk_queries[@]} thumbnails X-Cache disk (then hit), same bytes and ETag, 0 origin requests, exit 0 on SIGTERM; log: $opened; volume removed"

log "PASS: build ${build_seconds} s, image $image $(mib "$image_bytes") (debian:bookworm-slim base $(mib "$base_bytes")), user $user ($who), disk tier kept across containers on a named volume"

#!/usr/bin/env bash
# bench/disk-cold.sh — how long does the disk cache take to open a folder of N entries when none
# of it is in memory (after a reboot)? An ext4 image on a loop device with direct I/O (so the
# host's page cache does not hold the image either), mounted in a private mount namespace: filled
# by `thumbd-bench disk --phase fill`, then mounted afresh before each measurement: the store's
# opening (names and fstatat), the rejected design's pass (each header read as well), and the
# opening once more (warm, for scale). Needs root (loop device, mount). Prints one JSON line per
# phase. ENTRIES (100000) and BODY (1024) set the folder; the image is removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
ENTRIES=${ENTRIES:-100000}
BODY=${BODY:-1024}
[ "$(id -u)" = 0 ] || { echo "disk-cold.sh: needs root (loop device, mount)" >&2; exit 1; }
if [ -z "${BIN:-}" ]; then
  swift build -c release --package-path bench >&2
  BIN="$(swift build -c release --package-path bench --show-bin-path)/thumbd-bench"
fi
WORK=$(mktemp -d /var/tmp/disk-cold.XXXXXX)
LOOP=""
cleanup() {
  [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT INT TERM
# Each entry takes at least one 4 KiB block; twice that, and room for the journal.
truncate -s $((ENTRIES * 8192 + 256 * 1024 * 1024)) "$WORK/fs.img"
# An inode per entry (the default, one per 16 KiB, runs out first with small bodies).
mkfs.ext4 -q -F -N $((ENTRIES * 2 + 1024)) "$WORK/fs.img"
LOOP=$(losetup --find --show --direct-io=on "$WORK/fs.img")
mkdir "$WORK/mnt"
export BIN LOOP WORK ENTRIES BODY
unshare -m --propagation private bash -euo pipefail -c '
  phase() {
    mount "$LOOP" "$WORK/mnt"
    "$BIN" disk --dir "$WORK/mnt/cache" --entries "$ENTRIES" --body "$BODY" --phase "$1"
    [ "${2:-}" = again ] && "$BIN" disk --dir "$WORK/mnt/cache" --entries "$ENTRIES" --body "$BODY" --phase "$1"
    umount "$WORK/mnt"
  }
  phase fill
  phase open again
  phase headers again
'

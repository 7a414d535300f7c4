#pragma once
// Why this target exists: the disk tier's reads on a polling thread must never wait for the disk,
// and the two calls that say "only if it will not wait" are not callable from Swift: `openat2`
// has no glibc wrapper in Debian 12 (it is reached through `syscall`, a C variadic), and
// `preadv2` is declared only under _GNU_SOURCE. No policy lives here: the Swift module DiskCache
// decides when to use them and what to do when they would wait.
#include <stddef.h>
#include <sys/types.h>

/// Opens `name` in the folder `dirfd` read-only, only if the kernel can resolve it from its caches
/// (`openat2` with RESOLVE_CACHED, Linux 5.12+, no symbolic links followed): no read of a directory
/// or an inode from the disk. Returns the descriptor (close-on-exec), or -errno: -EAGAIN when the
/// lookup would have needed the disk — and also when the kernel does not know the call, so the
/// caller's fallback (a thread that may wait) covers older kernels.
int cdisk_open_cached(int dirfd, const char *name);

/// Reads up to `count` bytes at `offset` only from the page cache (`preadv2` with RWF_NOWAIT):
/// returns the bytes read (possibly fewer, when only part is cached) or -errno, -EAGAIN when none
/// is cached or the file system cannot promise not to wait.
ssize_t cdisk_pread_nowait(int fd, void *buffer, size_t count, off_t offset);

#define _GNU_SOURCE
#include "CDiskShims.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

int cdisk_open_cached(int dirfd, const char *name) {
    struct open_how how = {
        .flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW,
        .resolve = RESOLVE_CACHED | RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
    };
    long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof how);
    if (fd >= 0) return (int)fd;
    int error = errno;
    // Unknown to this kernel (or to a seccomp filter): not "no such file", just "not this way".
    if (error == ENOSYS || error == EINVAL || error == E2BIG || error == EPERM) return -EAGAIN;
    return -error;
}

ssize_t cdisk_pread_nowait(int fd, void *buffer, size_t count, off_t offset) {
    struct iovec vector = {.iov_base = buffer, .iov_len = count};
    ssize_t done = preadv2(fd, &vector, 1, offset, RWF_NOWAIT);
    if (done >= 0) return done;
    int error = errno;
    if (error == EOPNOTSUPP || error == ENOSYS || error == EINVAL) return -EAGAIN;
    return -error;
}

internal import Glibc
internal import Primitives

/// The system calls the store makes on files, each retried on `EINTR` and failing with the call's
/// `errno`. Every path is relative to the store's folder (`openat`, `renameat`, `unlinkat`): the
/// folder is resolved once, when the store opens, so a later rename of the folder or a mount
/// over its path cannot send a write elsewhere.
enum FileCalls {
    /// Opens `name` in `directory`, never through a symbolic link (the store makes none, so one
    /// there was planted: it must not lead a read or a write outside the folder). `mode` is used
    /// only with `O_CREAT`.
    static func open(
        _ name: String, in directory: FileDescriptor, flags: Int32, mode: mode_t = 0o644
    ) throws(SystemError) -> FileDescriptor {
        while true {
            let result = name.withCString { openat(directory.rawValue, $0, flags | O_CLOEXEC | O_NOFOLLOW, mode) }
            if result >= 0 { return FileDescriptor(adopting: result) }
            guard errno == EINTR else { throw SystemError(operation: "open", code: errno) }
        }
    }

    /// Opens an absolute path (the folder itself, `/proc` files).
    static func open(path: String, flags: Int32) throws(SystemError) -> FileDescriptor {
        while true {
            let result = path.withCString { Glibc.open($0, flags | O_CLOEXEC) }
            if result >= 0 { return FileDescriptor(adopting: result) }
            guard errno == EINTR else { throw SystemError(operation: "open", code: errno) }
        }
    }

    /// Removes `name`; a name already gone is not an error.
    static func unlink(_ name: String, in directory: FileDescriptor) throws(SystemError) {
        let result = name.withCString { unlinkat(directory.rawValue, $0, 0) }
        guard result == 0 || errno == ENOENT else { throw SystemError(operation: "unlink", code: errno) }
    }

    static func rename(_ from: String, to: String, in directory: FileDescriptor) throws(SystemError) {
        let result = from.withCString { old in
            to.withCString { new in renameat(directory.rawValue, old, directory.rawValue, new) }
        }
        guard result == 0 else { throw SystemError(operation: "rename", code: errno) }
    }

    /// The `stat` of an open file.
    static func status(of file: FileDescriptor) throws(SystemError) -> stat {
        var status = stat()
        guard fstat(file.rawValue, &status) == 0 else { throw SystemError(operation: "fstat", code: errno) }
        return status
    }

    /// The `stat` of `name` itself (a symbolic link is not followed); nil when it is gone.
    static func status(of name: String, in directory: FileDescriptor) throws(SystemError) -> stat? {
        var status = stat()
        let result = name.withCString { fstatat(directory.rawValue, $0, &status, AT_SYMLINK_NOFOLLOW) }
        if result == 0 { return status }
        if errno == ENOENT { return nil }
        throw SystemError(operation: "stat", code: errno)
    }

    /// Reads up to `buffer.count` bytes at `offset`, stopping early only at the end of the file:
    /// how many were read.
    static func read(
        _ file: FileDescriptor, into buffer: UnsafeMutableRawBufferPointer, at offset: Int
    ) throws(SystemError) -> Int {
        var done = 0
        while done < buffer.count {
            let count = pread(file.rawValue, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if count > 0 {
                done += count
            } else if count == 0 {
                break
            } else if errno != EINTR {
                throw SystemError(operation: "read", code: errno)
            }
        }
        return done
    }

    /// Writes every byte of `pieces`, in order, with as few `writev` calls as the kernel allows.
    /// `fault`, a test's seam, is asked before each call and may fail it with an `errno`.
    static func write(
        _ file: FileDescriptor, _ pieces: [UnsafeRawBufferPointer], fault: (@Sendable () -> Int32?)?
    ) throws(SystemError) {
        var pieces = pieces.filter { !$0.isEmpty }
        while !pieces.isEmpty {
            if let code = fault?() { throw SystemError(operation: "write", code: code) }
            var vectors = pieces.map {
                iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
            }
            let written = writev(file.rawValue, &vectors, Int32(vectors.count))
            if written < 0 {
                if errno == EINTR { continue }
                throw SystemError(operation: "write", code: errno)
            }
            // A regular file's write makes progress or fails; 0 would loop for ever.
            guard written > 0 else { throw SystemError(operation: "write", code: EIO) }
            var left = written
            while left > 0 {
                if left >= pieces[0].count {
                    left -= pieces[0].count
                    pieces.removeFirst()
                } else {
                    pieces[0] = UnsafeRawBufferPointer(rebasing: pieces[0][left...])
                    left = 0
                }
            }
        }
    }

    /// Copies `count` bytes at `offset` of `source` to the end of what was written to `target`,
    /// in the kernel (`sendfile` between two files, Linux ≥ 2.6.33): an update rewrites a header
    /// without the body passing through this process.
    static func copy(
        from source: FileDescriptor, at offset: Int, count: Int, to target: FileDescriptor,
        fault: (@Sendable () -> Int32?)?
    ) throws(SystemError) {
        var position = off_t(offset)
        var left = count
        while left > 0 {
            if let code = fault?() { throw SystemError(operation: "write", code: code) }
            let copied = sendfile(target.rawValue, source.rawValue, &position, left)
            if copied < 0 {
                if errno == EINTR { continue }
                throw SystemError(operation: "sendfile", code: errno)
            }
            // The source ended early: it was cut short after its header was read.
            guard copied > 0 else { throw SystemError(operation: "sendfile", code: EIO) }
            left -= copied
        }
    }

    static func sync(_ file: FileDescriptor) throws(SystemError) {
        while fsync(file.rawValue) != 0 {
            guard errno == EINTR else { throw SystemError(operation: "fsync", code: errno) }
        }
    }

    /// Sets a file's modification (and access) time: the recency a restart reads back.
    static func setModified(_ file: FileDescriptor, wallNanoseconds: Int64) {
        let time = timespec(tv_sec: Int(wallNanoseconds / 1_000_000_000), tv_nsec: Int(wallNanoseconds % 1_000_000_000))
        var times = (time, time)
        // Best effort: a recency that is not recorded only makes the restart's order rougher.
        _ = withUnsafePointer(to: &times) {
            $0.withMemoryRebound(to: timespec.self, capacity: 2) { futimens(file.rawValue, $0) }
        }
    }
}

extension stat {
    /// Modification time, nanoseconds since 1970.
    var modifiedWallNanoseconds: Int64 { Int64(st_mtim.tv_sec) * 1_000_000_000 + Int64(st_mtim.tv_nsec) }
    var isRegularFile: Bool { st_mode & S_IFMT == S_IFREG }
    var isDirectory: Bool { st_mode & S_IFMT == S_IFDIR }
}

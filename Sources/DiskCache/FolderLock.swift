internal import Glibc
internal import Primitives

/// The exclusive lock that keeps a second store (this process's or another's) out of a folder:
/// `flock(LOCK_EX | LOCK_NB)` on `.lock` in it, held for as long as the descriptor is open.
///
/// Why `flock` and not `fcntl` (POSIX record) locks: a record lock belongs to the process, so a
/// second store in the same process would be granted it, and closing *any* descriptor of the file
/// drops it; a `flock` lock belongs to the open file description, so a second `open` conflicts
/// even in-process, and only closing this descriptor (the store going away, or the process
/// ending, however it ends) releases it. The kernel releases it for a crashed process, so a stale
/// lock file never blocks a restart. Not over NFS (where `flock` may be emulated with `fcntl`).
struct FolderLock: Sendable {
    static let fileName = ".lock"

    let file: FileDescriptor

    /// Takes the lock, writing this process's id into the file for people (`cat DIR/.lock`).
    static func acquire(in folder: FileDescriptor, path: String) throws(DiskStoreError) -> FolderLock {
        let file: FileDescriptor
        do {
            file = try FileCalls.open(fileName, in: folder, flags: O_RDWR | O_CREAT)
        } catch {
            throw DiskStoreError(
                directory: path, reason: error.code == EROFS ? .readOnlyFileSystem : .notWritable(error))
        }
        // A lock still held a second after the first try is another store's. Until then it may be
        // a copy of a closed store's descriptor: a child that another thread of this process is
        // spawning holds copies of every descriptor from its clone to its exec (close-on-exec
        // closes them only then), and the lock lives while any copy does — seen in CI, where a
        // test reopening its own folder found it "in use" and /proc/locks then named no holder.
        var waited = 0
        while flock(file.rawValue, LOCK_EX | LOCK_NB) != 0 {
            if errno == EINTR { continue }
            if errno == EWOULDBLOCK && waited < 100 {
                waited += 1
                usleep(10_000)
                continue
            }
            if errno == EWOULDBLOCK { throw DiskStoreError(directory: path, reason: .locked(holder: holder(of: file))) }
            throw DiskStoreError(directory: path, reason: .notWritable(SystemError(operation: "flock", code: errno)))
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(file.rawValue, 0)
        _ = text.withUnsafeBytes { pwrite(file.rawValue, $0.baseAddress, $0.count, 0) }
        return FolderLock(file: file)
    }

    /// The process holding a `flock` on `file`, from `/proc/locks` (lines such as
    /// `1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF`, the device as hex major:minor); nil when
    /// it cannot be told. Not the pid written in the file: the holder may not be a store.
    /// Lets the folder go before the descriptor closes (see `DiskStore.releaseLock`).
    func release() { _ = flock(file.rawValue, LOCK_UN) }

    static func holder(of file: FileDescriptor) -> Int32? {
        guard let status = try? FileCalls.status(of: file) else { return nil }
        let device = UInt64(status.st_dev)
        let major = ((device >> 8) & 0xFFF) | ((device >> 32) & ~0xFFF)
        let minor = (device & 0xFF) | (UInt64(UInt32(truncatingIfNeeded: device >> 12)) & ~0xFF)
        let wanted =
            String(major, radix: 16, uppercase: false).leftPadded(2) + ":"
            + String(minor, radix: 16, uppercase: false).leftPadded(2) + ":" + String(status.st_ino)
        guard let text = readProcLocks() else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            // "N:", "FLOCK", "ADVISORY", "WRITE", pid, device:inode, start, end; a waiter's line
            // has "->" after the number and is skipped.
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted else { continue }
            return Int32(fields[4])
        }
        return nil
    }

    /// `/proc/locks`, whole (it lists every lock on the machine: bounded to 1 MiB).
    private static func readProcLocks() -> String? {
        guard let file = try? FileCalls.open(path: "/proc/locks", flags: O_RDONLY) else { return nil }
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        // /proc files are made as they are read: read until the end, not by a size.
        let count = bytes.withUnsafeMutableBytes { (try? FileCalls.read(file, into: $0, at: 0)) ?? 0 }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

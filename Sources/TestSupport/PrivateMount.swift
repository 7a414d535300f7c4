import Foundation
internal import Primitives

#if canImport(Glibc)
    internal import Glibc
#endif

/// A tmpfs of a chosen size (or read-only) that only one thread sees: the thread leaves the
/// process's mount namespace (`unshare(CLONE_NEWNS)` affects the calling thread alone), makes its
/// mounts private so nothing propagates back to the host, mounts the tmpfs on a new folder and
/// runs the test's body there. A store opened by the body keeps working from other threads (it
/// resolves its folder once, then works through the descriptor); the mount goes when the thread
/// and every descriptor into it are gone, and nothing is left mounted on the host even if the test
/// crashes.
///
/// Needs `CAP_SYS_ADMIN` (root, as this sandbox and CI containers run): without it the tests that
/// use it are reported as skipped with that reason, and the injected faults (`DiskFaults`) cover
/// the same code paths.
public enum PrivateMount {
    /// Whether a private tmpfs can be mounted here (tried once).
    public static let isAvailable: Bool = {
        let outcome = Monitor<Bool?>(nil)
        do {
            try DetachedThread.start(name: "mount-probe", stackSize: 256 << 10) {
                let folder = try? mountPrivateTmpfs(options: "size=65536")
                if let folder { unmount(folder) }
                outcome.withLock { $0 = folder != nil }
            }
        } catch {
            return false
        }
        return outcome.wait(until: { $0 != nil }) { $0! }
    }()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Runs `body` with the path of a fresh tmpfs mounted with `options` ("size=262144", "ro").
    public static func run<T: Sendable>(options: String, _ body: @escaping @Sendable (String) throws -> T) async throws
        -> T
    {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Error>, Never>) in
            do {
                try DetachedThread.start(name: "private-mount", stackSize: 1 << 20) {
                    continuation.resume(
                        returning: Result {
                            let folder = try mountPrivateTmpfs(options: options)
                            defer { unmount(folder) }
                            return try body(folder)
                        })
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    private static func unmount(_ folder: String) {
        _ = umount2(folder, 2)  // MNT_DETACH
        rmdir(folder)
    }

    /// On the calling thread: a private mount namespace and a tmpfs on a new folder; its path.
    private static func mountPrivateTmpfs(options: String) throws -> String {
        // Glibc's Swift overlay does not declare unshare (a GNU extension): found at run time.
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "unshare") else {
            throw Failure(description: "no unshare in libc")
        }
        let unshare = unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        let newNamespace: Int32 = 0x0002_0000  // CLONE_NEWNS
        guard unshare(newNamespace) == 0 else {
            throw Failure(description: "unshare: \(String(cString: strerror(errno)))")
        }
        let recursive: UInt = 16384  // MS_REC
        let privateMounts: UInt = 1 << 18  // MS_PRIVATE
        guard mount("none", "/", nil, recursive | privateMounts, nil) == 0 else {
            throw Failure(description: "mount --make-rprivate /: \(String(cString: strerror(errno)))")
        }
        let folder = makeTemporaryFolder("disk-cache-mount")
        let readOnly: UInt = options.split(separator: ",").contains("ro") ? 1 : 0  // MS_RDONLY
        let data = options.split(separator: ",").filter { $0 != "ro" }.joined(separator: ",")
        guard mount("tmpfs", folder, "tmpfs", readOnly, data) == 0 else {
            let error = String(cString: strerror(errno))
            rmdir(folder)
            throw Failure(description: "mount tmpfs: \(error)")
        }
        return folder
    }
}

/// A new folder under the system's temporary folder, named `prefix-XXXXXX`.
public func makeTemporaryFolder(_ prefix: String) -> String {
    let base =
        NSTemporaryDirectory().hasSuffix("/") ? String(NSTemporaryDirectory().dropLast()) : NSTemporaryDirectory()
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    return template.withUnsafeMutableBufferPointer { buffer in
        precondition(mkdtemp(buffer.baseAddress!) != nil, "mkdtemp failed")
        return String(cString: buffer.baseAddress!)
    }
}

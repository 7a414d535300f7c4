import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

/// A folder that cannot be used is a clear error when the store opens, and two stores never share
/// one.
@Suite struct DiskFolderTests {
    @Test func makesAMissingFolderAndItsParents() throws {
        let folder = TemporaryFolder()
        let path = folder.at("a/b/cache")
        let store = try DiskStore(directory: path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(10)) == .stored)
        #expect(TemporaryFolder.entryFiles(in: path).count == 1)
    }

    @Test func aSecondStoreInTheSameProcessIsRefused() throws {
        let folder = TemporaryFolder()
        do {
            let first = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            let error = #expect(throws: DiskStoreError.self) {
                _ = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            }
            #expect(error?.reason == .locked(holder: getpid()))
            #expect(error?.description.contains(folder.path) == true)
            #expect(error?.description.contains("pid \(getpid())") == true)
            withExtendedLifetime(first) {}
        }
        // Released with the first store: the next one opens.
        _ = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
    }

    /// The lock is the kernel's, seen by other processes: `flock -n` in a child fails while a store
    /// holds the folder and succeeds once it is gone.
    @Test func anotherProcessSeesTheLock() async throws {
        let folder = TemporaryFolder()
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(try await run("/usr/bin/flock", ["-n", folder.at(".lock"), "true"]) == 1)
            withExtendedLifetime(store) {}
        }
        #expect(try await run("/usr/bin/flock", ["-n", folder.at(".lock"), "true"]) == 0)
        #expect(
            String(decoding: FileManager.default.contents(atPath: folder.at(".lock")) ?? Data(), as: UTF8.self)
                == "\(getpid())\n")
    }

    /// A folder held by another process: the error names the folder and that process's id.
    @Test func aFolderHeldByAnotherProcessIsRefused() async throws {
        let folder = TemporaryFolder()
        _ = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        // --no-fork: flock itself runs the command, so the lock's holder is the process started here.
        // It says it holds the lock in a file, polled for, not on a pipe: in CI's fresh root, under
        // both sanitizers, reading the pipe returned only after the child's 30-s sleep (the test
        // took 61 and 117 s), when its lock was gone. It now holds the lock far past any wait.
        let ready = folder.at("held")
        let holder = try ChildProcess(
            "/usr/bin/flock",
            ["--no-fork", folder.at(".lock"), "/bin/sh", "-c", "echo held > '\(ready)'; exec sleep 300"])
        defer {
            holder.signal(SIGKILL)
            holder.wait()
        }
        let held = await onThread {
            for _ in 0..<2000 where !FileManager.default.fileExists(atPath: ready) { usleep(50_000) }
            return FileManager.default.fileExists(atPath: ready)
        }
        try #require(held, "the child never took the lock")
        let error = #expect(throws: DiskStoreError.self) {
            _ = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        }
        #expect(error?.reason == .locked(holder: holder.pid))
    }

    @Test func aFileIsNotAFolder() throws {
        let folder = TemporaryFolder()
        #expect(FileManager.default.createFile(atPath: folder.at("file"), contents: Data([1])))
        let error = #expect(throws: DiskStoreError.self) {
            _ = try DiskStore(directory: folder.at("file"), budgetBytes: 1 << 20)
        }
        #expect(error?.reason == .notADirectory)
        #expect(error?.description == "disk cache folder \(folder.at("file")) is not a directory")
        let under = #expect(throws: DiskStoreError.self) {
            _ = try DiskStore(directory: folder.at("file/cache"), budgetBytes: 1 << 20)
        }
        #expect(under?.reason == .cannotOpen(SystemError(operation: "stat", code: ENOTDIR)))
    }

    @Test func aBudgetUnderOneBlockIsRefused() throws {
        let folder = TemporaryFolder()
        let error = #expect(throws: DiskStoreError.self) {
            _ = try DiskStore(directory: folder.path, budgetBytes: 100)
        }
        #expect(error?.reason == .invalidBudget)
    }

    @Test(.enabled(if: PrivateMount.isAvailable, "needs CAP_SYS_ADMIN to mount a tmpfs in a private namespace"))
    func aReadOnlyFileSystemIsRefused() async throws {
        let reason = try await PrivateMount.run(options: "ro,size=65536") { path -> DiskStoreError.Reason? in
            do throws(DiskStoreError) {
                _ = try DiskStore(directory: path, budgetBytes: 1 << 20)
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(reason == .readOnlyFileSystem)
    }

    /// Without write permission (only testable as a user other than root, whom permissions do not
    /// stop; the read-only file system above covers the refusal as root).
    @Test(.enabled(if: geteuid() != 0, "root writes whatever the permissions"))
    func aFolderWithoutWritePermissionIsRefused() throws {
        let folder = TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.at("cache"), withIntermediateDirectories: false)
        #expect(chmod(folder.at("cache"), 0o555) == 0)
        defer { chmod(folder.at("cache"), 0o755) }
        let error = #expect(throws: DiskStoreError.self) {
            _ = try DiskStore(directory: folder.at("cache"), budgetBytes: 1 << 20)
        }
        #expect(error?.reason == .notWritable(SystemError(operation: "open", code: EACCES)))
    }

    /// Runs a program to its end off the cooperative pool; its exit status.
    private func run(_ program: String, _ arguments: [String]) async throws -> Int32 {
        try await ChildProcess.run(program, arguments).status
    }
}

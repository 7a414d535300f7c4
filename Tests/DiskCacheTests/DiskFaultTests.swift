import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

/// A disk that fails while writing stops the writes (with the error, for a log line and a metric),
/// leaves no temporary file, keeps serving what it has, and takes writes again after the retry
/// interval once a write succeeds.
@Suite struct DiskFaultTests {
    /// A real full disk: a 256 KiB tmpfs in a private mount namespace, a budget far above it. The
    /// store is opened on the mount's thread and used from the test's (it works through its
    /// folder's descriptor, which keeps the detached mount alive and usable).
    @Test(.enabled(if: PrivateMount.isAvailable, "needs CAP_SYS_ADMIN to mount a tmpfs in a private namespace"))
    func aFullDiskStopsWritesAndKeepsServing() async throws {
        let clock = TestClock()
        let store = try await PrivateMount.run(options: "size=262144") { path in
            try DiskStore(directory: path, budgetBytes: 64 << 20, options: testOptions(clock: clock))
        }
        let folder = "/proc/self/fd/\(store.folder.rawValue)"
        var stored: [String: [UInt8]] = [:]
        var outcome = DiskPutResult.stored
        while outcome == .stored, stored.count < 100 {
            let key = "entry \(stored.count)"
            let bytes = body(20_000, seed: UInt8(stored.count))
            outcome = store.put(key: key, sourceKey: "s", meta: meta(), body: bytes)
            if outcome == .stored { stored[key] = bytes }
        }
        // 64 pages: one for the lock file, five for each entry; so 12 (fewer if tmpfs keeps some).
        #expect((8...12).contains(stored.count))
        #expect(outcome == .failed(SystemError(operation: "write", code: ENOSPC), stoppedWrites: true))
        try expectStopped(store, folder: folder, error: ENOSPC, serving: stored)

        // Room made, but the retry interval has not passed: still stopped.
        for key in stored.keys.prefix(3) { store.remove(key) }
        #expect(store.put(key: "later", sourceKey: "s", meta: meta(), body: body(20_000)) == .writesDisabled)
        clock.advance(.seconds(61))
        #expect(store.put(key: "later", sourceKey: "s", meta: meta(), body: body(20_000)) == .stored)
        #expect(!store.metrics.writesDisabled)
        #expect(store.get("later")?.body.array == body(20_000))
    }

    /// What a real folder cannot be made to do on demand, through the write seam: an I/O error and
    /// a quota; each stops writes exactly as a full disk does.
    @Test(arguments: [EIO, EDQUOT])
    func anInjectedFaultStopsWrites(code: Int32) throws {
        let folder = TemporaryFolder()
        let clock = TestClock()
        let failing = Locked(false)
        var faults = DiskFaults()
        faults.writeError = { failing.withLock { $0 } ? code : nil }
        let store = try DiskStore(
            directory: folder.path, budgetBytes: 1 << 20, options: testOptions(clock: clock, faults: faults))
        #expect(store.put(key: "a", sourceKey: "s", meta: meta(), body: body(5000)) == .stored)
        failing.withLock { $0 = true }
        #expect(
            store.put(key: "b", sourceKey: "s", meta: meta(), body: body(5000))
                == .failed(SystemError(operation: "write", code: code), stoppedWrites: true))
        try expectStopped(store, folder: folder.path, error: code, serving: ["a": body(5000)])
        // The first try after the interval fails again: stopped for another interval.
        clock.advance(.seconds(61))
        #expect(
            store.put(key: "b", sourceKey: "s", meta: meta(), body: body(5000))
                == .failed(SystemError(operation: "write", code: code), stoppedWrites: true))
        #expect(store.put(key: "b", sourceKey: "s", meta: meta(), body: body(5000)) == .writesDisabled)
        failing.withLock { $0 = false }
        clock.advance(.seconds(61))
        #expect(store.put(key: "b", sourceKey: "s", meta: meta(), body: body(5000)) == .stored)
        #expect(!store.metrics.writesDisabled)
        #expect(store.metrics.writeFailures == 2)
    }

    /// A failure that says nothing about the disk (out of descriptors) fails one write only.
    @Test func aPassingFailureDoesNotStopWrites() throws {
        let folder = TemporaryFolder()
        let failures = Locked(1)
        var faults = DiskFaults()
        faults.writeError = {
            failures.withLock { left in
                defer { left -= 1 }
                return left > 0 ? EMFILE : nil
            }
        }
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions(faults: faults))
        #expect(
            store.put(key: "a", sourceKey: "s", meta: meta(), body: body(10))
                == .failed(SystemError(operation: "write", code: EMFILE), stoppedWrites: false))
        #expect(!store.metrics.writesDisabled)
        #expect(store.put(key: "a", sourceKey: "s", meta: meta(), body: body(10)) == .stored)
        #expect(store.metrics.bytes == store.blockSize)
    }

    /// A purge while an entry of its source is being written: the write is not renamed into place,
    /// so the purge is not undone, now or after a restart.
    @Test func aPurgeDuringAWriteWins() async throws {
        let folder = TemporaryFolder()
        let held = try await HeldPut(in: folder, key: "variant a", sourceKey: "a", count: 5000)
        let store = held.store
        // Its room is reserved while it is written.
        #expect(store.metrics.bytes == 2 * store.blockSize)
        #expect(store.removeAll(sourceKey: "a") == DiskRemoval())
        let result = await held.release()
        #expect(result == .cancelled)
        #expect(!store.contains("variant a"))
        #expect(store.metrics.bytes == 0)
        #expect(folder.names() == [".lock"])
    }

    /// A second write of a key being written is refused at once (`busy`), not queued.
    @Test func aSecondWriteOfTheSameKeyIsBusy() async throws {
        let folder = TemporaryFolder()
        let held = try await HeldPut(in: folder, key: "k", sourceKey: "s", count: 100)
        let store = held.store
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(100)) == .busy)
        #expect(await held.release() == .stored)
        #expect(store.get("k") != nil)
    }

    /// Writes stopped with `error`; no temporary file left; every entry in `serving` still reads back.
    private func expectStopped(_ store: DiskStore, folder: String, error: Int32, serving entries: [String: [UInt8]])
        throws
    {
        let metrics = store.metrics
        #expect(metrics.writesDisabled)
        #expect(metrics.writeFailures == 1)
        #expect(metrics.lastWriteError?.code == error)
        #expect(metrics.entries == entries.count)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        #expect(!names.contains { $0.hasPrefix(".tmp-") })
        #expect(store.put(key: "another", sourceKey: "s", meta: meta(), body: body(10)) == .writesDisabled)
        for (key, bytes) in entries {
            #expect(store.get(key)?.body.array == bytes)
        }
    }
}

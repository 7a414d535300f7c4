import Foundation
import Primitives
import Synchronization
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

/// A folder of its own under the system's temporary folder, removed with everything in it when
/// the value goes.
final class TemporaryFolder: Sendable {
    let path: String

    init() {
        path = makeTemporaryFolder("disk-cache-test")
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside it.
    func at(_ name: String) -> String { path + "/" + name }

    /// The names in it (or in `sub`), sorted.
    func names(_ sub: String? = nil) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: sub.map(at) ?? path)) ?? []).sorted()
    }

    /// The entry files in `folder` (names ending in the format's suffix).
    static func entryFiles(in folder: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(EntryName.suffix) }
            .sorted()
    }
}

extension DiskStore {
    /// Bytes read from entry files so far.
    var bytesReadSoFar: Int { bytesRead.load(ordering: .relaxed) }
}

/// Clocks a test moves by hand. The wall clock also moves a millisecond at every reading, so that
/// two writes never get the same modification time.
final class TestClock: Sendable {
    private let monotonicNow = Locked(ContinuousClock.now)
    private let wallNow = Locked(Int64(1_750_000_000) * 1_000_000_000)

    func advance(_ duration: Duration) {
        monotonicNow.withLock { $0 += duration }
        wallNow.withLock { $0 += duration.nanoseconds }
    }

    var diskClock: DiskClock {
        DiskClock(
            monotonic: { self.monotonicNow.withLock { $0 } },
            wallNanoseconds: {
                self.wallNow.withLock { now in
                    now += 1_000_000
                    return now
                }
            })
    }
}

/// Options with the test's clock and small bounds.
func testOptions(
    clock: TestClock = TestClock(), maxEntryBytes: Int? = nil, touchInterval: Duration = .seconds(60),
    faults: DiskFaults = DiskFaults()
) -> DiskStoreOptions {
    var options = DiskStoreOptions(maxEntryBytes: maxEntryBytes)
    options.clock = clock.diskClock
    options.touchInterval = touchInterval
    options.faults = faults
    return options
}

/// A body of `count` bytes that differs by `seed`.
func body(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed) &* 7) }
}

func meta(_ type: String = "image/webp", expires: Int64 = 1_800_000_000, etag: String? = "\"e1\"") -> EntryMeta {
    EntryMeta(
        contentType: type, etag: etag, lastModified: "Wed, 21 Oct 2015 07:28:00 GMT", expires: expires,
        extra: [1, 2, 3])
}

/// Runs `body` on a thread of its own (it blocks) and waits for it without holding a thread of the
/// cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        try! DetachedThread.start(name: "disk-test", stackSize: 1 << 20) { continuation.resume(returning: body()) }
    }
}

/// A `put` begun on a thread of its own and held just before its rename (the store's
/// `beforeRename` fault) until `release()`: for what must hold while a write is in flight.
final class HeldPut: Sendable {
    let store: DiskStore
    private let gate = Monitor((arrived: false, open: false))
    private let outcome = Monitor<DiskPutResult?>(nil)

    /// Returns once the write is held.
    init(in folder: TemporaryFolder, key: String, sourceKey: String, count: Int) async throws {
        var faults = DiskFaults()
        let (gate, outcome) = (gate, outcome)
        faults.beforeRename = {
            gate.withLock { $0.arrived = true }
            gate.wait(until: { $0.open })
        }
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions(faults: faults))
        self.store = store
        try DetachedThread.start(name: "disk-writer", stackSize: 1 << 20) {
            let result = store.put(key: key, sourceKey: sourceKey, meta: meta(), body: body(count))
            outcome.withLock { $0 = result }
        }
        await onThread { gate.wait(until: { $0.arrived }) }
    }

    /// Lets the write (and any later one) go on; what the held `put` returned.
    func release() async -> DiskPutResult {
        gate.withLock { $0.open = true }
        let outcome = outcome
        return await onThread { outcome.wait(until: { $0 != nil }) { $0! } }
    }
}

/// Changes a file in place: `change` gets its bytes and returns the new ones.
func rewriteFile(_ path: String, _ change: (inout [UInt8]) -> Void) throws {
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    change(&bytes)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// The size of the file at `path`.
func fileSize(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? -1
}

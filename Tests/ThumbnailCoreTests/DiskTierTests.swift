import Primitives
import TestSupport
import Testing

@testable import DiskCache
@testable import ThumbnailCore

/// The disk tier's queue (`DiskTier`): writes run on its writer thread in order, and a purge beats
/// every write of its source queued or running when it is asked for — from that moment for
/// readers, on disk once the writer reaches it.
@Suite struct DiskTierTests {
    static let source = try! SourceURL(parsing: "http://images.example/a.jpg")
    static let other = try! SourceURL(parsing: "http://images.example/b.jpg")

    static func meta() -> EntryMeta { EntryMeta(contentType: "image/jpeg", expires: Int64.max / 2) }

    /// A tier whose writer stops before its first rename until `gate` opens.
    static func tier(gate: TestGate, entered: TestGate, limits: DiskTier.Limits = DiskTier.Limits()) throws
        -> DiskTier
    {
        var options = DiskStoreOptions()
        let first = Locked(true)
        options.faults.beforeRename = {
            guard
                first.withLock({ isFirst in
                    defer { isFirst = false }; return isFirst
                })
            else { return }
            entered.open()
            gate.wait()
        }
        let store = try DiskStore(
            directory: makeTemporaryFolder("thumbd-tier"), budgetBytes: 1 << 20, options: options)
        return try DiskTier(store: store, limits: limits)
    }

    static func read(_ tier: DiskTier, _ key: CacheKey) -> [UInt8]? {
        let result = Monitor<[UInt8]??>(nil)
        #expect(tier.read(key) { entry in result.withLock { $0 = .some(entry?.body.array) } })
        return result.wait(until: { $0 != nil }) { $0! }
    }

    @Test func aPurgeBeatsTheWritesOfItsSourceQueuedOrRunning() async throws {
        let gate = TestGate()
        let entered = TestGate()
        let tier = try Self.tier(gate: gate, entered: entered)
        defer { tier.stop() }
        let running = CacheKey.original(Self.source)
        let queued = CacheKey.info(Self.source)
        let unrelated = CacheKey.original(Self.other)
        tier.write(running, meta: Self.meta(), bytes: ImageBytes([1]))
        entered.wait()  // the writer holds the first write just before its rename
        tier.write(queued, meta: Self.meta(), bytes: ImageBytes([2]))
        tier.write(unrelated, meta: Self.meta(), bytes: ImageBytes([3]))
        #expect(tier.metrics.writeQueue == 3)  // the running write counts until it ends

        let removed = Monitor<DiskRemoval?>(nil)
        tier.purge(Self.source) { result in removed.withLock { $0 = result } }
        #expect(tier.metrics.writeQueue == 2)  // the queued write of the source is dropped
        gate.open()
        let result = removed.wait(until: { $0 != nil }) { $0! }
        // The write that was running went into place, and the purge, after it, took it away.
        #expect(result.entries == 1)
        #expect(Self.read(tier, running) == nil)
        #expect(Self.read(tier, queued) == nil)
        #expect(!tier.mayHave(running) && !tier.mayHave(queued))
        // Other sources are untouched (written after the purge, which went first).
        #expect(await eventually(tier.metrics.writeQueue == 0) { $0 })
        #expect(Self.read(tier, unrelated) == [3])
    }

    @Test func aSourceBeingPurgedIsNotReadEvenBeforeItsFilesGo() throws {
        let gate = TestGate()
        let entered = TestGate()
        let tier = try Self.tier(gate: gate, entered: entered)
        defer { tier.stop() }
        let blocker = CacheKey.original(Self.other)
        let key = CacheKey.original(Self.source)
        // Stored before the writer is held (the gate holds only the first rename: this one).
        tier.write(blocker, meta: Self.meta(), bytes: ImageBytes([9]))
        entered.wait()
        // Written directly (the writer is held): the source has an entry on disk.
        #expect(
            tier.store.put(key: tier.storeKey(key), sourceKey: Self.source.description, meta: Self.meta(), body: [4])
                == .stored)
        #expect(Self.read(tier, key) == [4])
        tier.purge(Self.source)
        // The purge waits behind the held write, but readers already find nothing.
        #expect(tier.mayHave(key))
        #expect(Self.read(tier, key) == nil)
        gate.open()
    }

    @Test func aFullWriteQueueDropsAndCounts() throws {
        let gate = TestGate()
        let entered = TestGate()
        var limits = DiskTier.Limits()
        limits.writeQueue = 2
        let tier = try Self.tier(gate: gate, entered: entered, limits: limits)
        defer { tier.stop() }
        tier.write(.original(Self.source), meta: Self.meta(), bytes: ImageBytes([1]))
        entered.wait()
        for index in 0..<4 {
            tier.write(
                .original(try SourceURL(parsing: "http://images.example/\(index).jpg")), meta: Self.meta(),
                bytes: ImageBytes([1]))
        }
        // The running write and one queued: the bound counts both.
        #expect(tier.metrics.writeQueue == 2)
        #expect(tier.metrics.writesDropped == 3)
        gate.open()
    }
}

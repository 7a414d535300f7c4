import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DiskBudgetTests {
    private func blockSize(_ folder: TemporaryFolder) throws -> Int {
        FolderCheck.blockSize(of: try FileCalls.open(path: folder.path, flags: O_RDONLY))
    }

    /// Room for four one-block entries (each stored entry may take the whole budget).
    private func fourBlockStore(_ folder: TemporaryFolder, clock: TestClock) throws -> DiskStore {
        let block = try blockSize(folder)
        return try DiskStore(
            directory: folder.path, budgetBytes: 4 * block, options: testOptions(clock: clock, maxEntryBytes: 4 * block)
        )
    }

    private func put(_ store: DiskStore, _ key: String) {
        #expect(store.put(key: key, sourceKey: "s", meta: meta(), body: body(1000)) == .stored)
    }

    @Test func evictsTheLeastRecentlyUsedFirst() throws {
        let folder = TemporaryFolder()
        let store = try fourBlockStore(folder, clock: TestClock())
        for key in ["a", "b", "c", "d"] { put(store, key) }
        #expect(store.metrics.bytes == store.budgetBytes)
        #expect(store.get("a") != nil)  // a is now the most recent: b goes first
        put(store, "e")
        #expect(!store.contains("b"))
        put(store, "f")
        #expect(!store.contains("c"))
        #expect(["a", "d", "e", "f"].allSatisfy(store.contains))
        #expect(store.metrics.evictions == 2)
        #expect(store.metrics.bytes == store.budgetBytes)
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 4)
    }

    /// A big entry makes room by evicting as many as it needs, oldest first.
    @Test func aLargeEntryEvictsSeveral() throws {
        let folder = TemporaryFolder()
        let store = try fourBlockStore(folder, clock: TestClock())
        for key in ["a", "b", "c", "d"] { put(store, key) }
        #expect(store.put(key: "big", sourceKey: "s", meta: meta(), body: body(2 * store.blockSize)) == .stored)
        #expect(!store.contains("a") && !store.contains("b") && !store.contains("c"))
        #expect(store.contains("d") && store.contains("big"))
        #expect(store.metrics.bytes == store.budgetBytes)
    }

    /// The recency order survives a restart through the files' modification times: a hit more than
    /// `touchInterval` after the last refresh moves its entry to the recent end on disk too.
    @Test func recencySurvivesARestart() throws {
        let folder = TemporaryFolder()
        let clock = TestClock()
        do {
            let store = try fourBlockStore(folder, clock: clock)
            for key in ["a", "b", "c", "d"] { put(store, key) }
            clock.advance(.seconds(61))
            // Both refreshed on disk, a then b: the order a restart reads is c, d, a, b.
            #expect(store.get("a") != nil)
            #expect(store.get("b") != nil)
        }
        let store = try fourBlockStore(folder, clock: clock)
        #expect(store.metrics.entries == 4)
        put(store, "e")
        #expect(!store.contains("c"))
        put(store, "f")
        #expect(!store.contains("d"))
        #expect(["a", "b", "e", "f"].allSatisfy(store.contains))
    }

    /// Within `touchInterval` of its last refresh a hit does not write the file's time: the order a
    /// restart sees is the write order.
    @Test func hitsWithinTheTouchIntervalWriteNothing() throws {
        let folder = TemporaryFolder()
        let clock = TestClock()
        do {
            let store = try fourBlockStore(folder, clock: clock)
            for key in ["a", "b", "c", "d"] { put(store, key) }
            clock.advance(.seconds(30))
            #expect(store.get("a") != nil)
        }
        let store = try fourBlockStore(folder, clock: clock)
        put(store, "e")
        #expect(!store.contains("a"))
    }

    /// A budget lowered between runs: the opening evicts least recently used entries down to it.
    @Test func aLowerBudgetEvictsAtOpen() throws {
        let folder = TemporaryFolder()
        let clock = TestClock()
        do {
            let store = try fourBlockStore(folder, clock: clock)
            for key in ["a", "b", "c", "d"] { put(store, key) }
        }
        let block = try blockSize(folder)
        let store = try DiskStore(
            directory: folder.path, budgetBytes: 2 * block, options: testOptions(clock: clock, maxEntryBytes: block))
        #expect(store.metrics.entries == 2)
        #expect(store.metrics.evictions == 2)
        #expect(store.contains("c") && store.contains("d"))
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 2)
    }

    /// `maxEntries` bounds the count whatever the bytes.
    @Test func theEntryBoundHolds() throws {
        let folder = TemporaryFolder()
        var options = testOptions()
        options.maxEntries = 3
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: options)
        for key in ["a", "b", "c", "d", "e"] { put(store, key) }
        #expect(store.metrics.entries == 3)
        #expect(["c", "d", "e"].allSatisfy(store.contains))
    }

    /// Many threads putting, reading and removing overlapping keys: afterwards the index and the
    /// folder agree exactly (every indexed entry has its file, of the size charged, and no other
    /// file is there), the budget holds, and every entry reads back whole.
    @Test func concurrentUseKeepsTheFolderAndTheIndexInStep() async throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 40 * 4096, options: testOptions())
        let done = Monitor(0)
        for thread in 0..<4 {
            try DetachedThread.start(name: "disk-load", stackSize: 1 << 20) {
                var random = SystemRandomNumberGenerator()
                for step in 0..<300 {
                    let key = "k\(Int.random(in: 0..<60, using: &random))"
                    switch (step + thread) % 5 {
                    case 0, 1:
                        _ = store.put(
                            key: key, sourceKey: "s\(key.count)", meta: meta(),
                            body: body(Int.random(in: 0..<9000, using: &random), seed: UInt8(step % 200)))
                    case 2: _ = store.get(key)
                    case 3: _ = store.openFile(key)
                    default: if step % 50 == 0 { store.removeAll(sourceKey: "s2") } else { store.remove(key) }
                    }
                }
                done.withLock { $0 += 1 }
            }
        }
        await onThread { done.wait(until: { $0 == 4 }) }
        let metrics = store.metrics
        #expect(metrics.bytes <= store.budgetBytes)
        #expect(metrics.corruptDropped == 0)
        let files = TemporaryFolder.entryFiles(in: folder.path)
        #expect(files.count == metrics.entries)
        #expect(!folder.names().contains { $0.hasPrefix(".tmp-") })
        let charged = files.reduce(0) { $0 + DiskStore.roundUp(fileSize(folder.at($1)), to: store.blockSize) }
        #expect(charged == metrics.bytes)
        let indexed = store.index.withLock { index in index.nodes.values.map(\.name.fileName) }
        #expect(Set(indexed) == Set(files))
        for key in (0..<60).map({ "k\($0)" }) where store.contains(key) {
            #expect(store.get(key) != nil)
        }
        #expect(store.metrics.corruptDropped == 0)
    }
}

import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct DiskStoreTests {
    @Test func storesAndReadsBack() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let bytes = body(20_000)
        #expect(store.put(key: "variant a w=100", sourceKey: "a", meta: meta(), body: bytes) == .stored)
        let entry = try #require(store.get("variant a w=100"))
        #expect(entry.body.array == bytes)
        #expect(entry.meta == meta())
        #expect(entry.key == "variant a w=100")
        #expect(entry.sourceKey == "a")
        #expect(store.get("variant a w=200") == nil)
        let metrics = store.metrics
        #expect(metrics.entries == 1)
        #expect(metrics.hits == 1)
        #expect(metrics.misses == 1)
        #expect(metrics.writes == 1)
        // 20,000 bytes of body and a header of under 4 KiB: five 4 KiB blocks.
        #expect(metrics.bytes == 5 * store.blockSize)
        // One file, named after the two digests, and the lock file; no temporary file is left.
        #expect(folder.names() == [".lock", TemporaryFolder.entryFiles(in: folder.path)[0]])
        #expect(TemporaryFolder.entryFiles(in: folder.path)[0].utf8.count == EntryName.length)
    }

    /// Absent validators and an empty extra stay absent and empty (not "" and not lost).
    @Test func keepsAbsentFieldsAbsent() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let bare = EntryMeta(contentType: "application/json", expires: -5)
        #expect(store.put(key: "k", sourceKey: "s", meta: bare, body: []) == .stored)
        let entry = try #require(store.get("k"))
        #expect(entry.meta == bare)
        #expect(entry.meta.etag == nil)
        #expect(entry.body.count == 0)
    }

    /// Reflection (`dump`, what a failed expectation prints) shows the folder and the counters
    /// instead of copying the store's fields, some of which cannot be copied (the runtime traps).
    @Test func reflectsWithoutCopyingItsState() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        var text = ""
        dump(store, to: &text)
        #expect(text.contains(folder.path))
        #expect(text.contains("writesDisabled: false"))
    }

    /// A new store on the folder finds every entry (same bytes, same metadata, same `storedAt`)
    /// without reading any file while it opens.
    @Test func restartFindsTheEntries() throws {
        let folder = TemporaryFolder()
        let clock = TestClock()
        var stored: [String: (EntryMeta, [UInt8], Int64)] = [:]
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 4 << 20, options: testOptions(clock: clock))
            for index in 0..<40 {
                let entryMeta = meta(expires: 1_800_000_000 + Int64(index), etag: index % 2 == 0 ? "\"\(index)\"" : nil)
                let bytes = body(500 + index * 300, seed: UInt8(index))
                #expect(
                    store.put(key: "key \(index)", sourceKey: "source \(index % 4)", meta: entryMeta, body: bytes)
                        == .stored)
                stored["key \(index)"] = (entryMeta, bytes, try #require(store.get("key \(index)")).storedAt)
            }
        }
        let reopened = try DiskStore(directory: folder.path, budgetBytes: 4 << 20, options: testOptions(clock: clock))
        #expect(reopened.metrics.entries == 40)
        #expect(reopened.bytesReadSoFar == 0)
        for (key, (entryMeta, bytes, storedAt)) in stored {
            let entry = try #require(reopened.get(key))
            #expect(entry.meta == entryMeta)
            #expect(entry.body.array == bytes)
            #expect(entry.storedAt == storedAt)
            #expect(entry.sourceKey == "source \(Int(key.split(separator: " ")[1])! % 4)")
        }
        #expect(reopened.metrics.hits == 40)
        #expect(reopened.metrics.corruptDropped == 0)
    }

    /// Opening reads names and sizes only: 200 entries of 1 GiB each (sparse files, so the disk
    /// holds nothing) open in well under a second, where reading them would take minutes, and the
    /// store reports no byte read. The one real entry among them still reads back.
    @Test func openingReadsNoBody() throws {
        let folder = TemporaryFolder()
        var options = testOptions(maxEntryBytes: 1 << 40)
        options.maxEntries = 1000
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 40, options: options)
            #expect(store.put(key: "real", sourceKey: "s", meta: meta(), body: body(3000)) == .stored)
        }
        for index in 0..<200 {
            let name = EntryName(key: NameDigest(of: "huge \(index)"), source: NameDigest(of: "s")).fileName
            let file = open(folder.at(name), O_WRONLY | O_CREAT, 0o644)
            #expect(file >= 0)
            #expect(ftruncate(file, 1 << 30) == 0)
            close(file)
        }
        let started = ContinuousClock.now
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 40, options: options)
        let elapsed = ContinuousClock.now - started
        #expect(elapsed < .seconds(1))
        #expect(store.metrics.entries == 201)
        #expect(store.bytesReadSoFar == 0)
        #expect(store.get("real")?.body.array == body(3000))
    }

    @Test func purgeBySourceAcrossARestart() throws {
        let folder = TemporaryFolder()
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            for width in [100, 200, 300] {
                #expect(
                    store.put(key: "variant a w=\(width)", sourceKey: "a", meta: meta(), body: body(1000)) == .stored)
                #expect(
                    store.put(key: "variant b w=\(width)", sourceKey: "b", meta: meta(), body: body(1000)) == .stored)
            }
            #expect(store.put(key: "original a", sourceKey: "a", meta: meta(), body: body(5000)) == .stored)
        }
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            let removal = store.removeAll(sourceKey: "a")
            #expect(removal == DiskRemoval(entries: 4, bytes: 5 * store.blockSize))
            #expect(store.get("variant a w=100") == nil)
            #expect(store.get("original a") == nil)
            #expect(store.get("variant b w=200") != nil)
            #expect(store.metrics.entries == 3)
            #expect(store.metrics.removals == 4)
            #expect(TemporaryFolder.entryFiles(in: folder.path).count == 3)
            #expect(store.removeAll(sourceKey: "a") == DiskRemoval())
        }
        // Gone for good: the next run does not find them either.
        let again = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(again.metrics.entries == 3)
        #expect(again.get("original a") == nil)
    }

    @Test func removeDeletesOneEntry() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "one", sourceKey: "s", meta: meta(), body: body(100)) == .stored)
        #expect(store.put(key: "two", sourceKey: "s", meta: meta(), body: body(100)) == .stored)
        #expect(store.remove("one"))
        #expect(!store.remove("one"))
        #expect(!store.contains("one"))
        #expect(store.contains("two"))
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 1)
        #expect(store.metrics.bytes == store.blockSize)
    }

    /// A put of a key already stored replaces it: one file, the new bytes, the budget charged once.
    @Test func putReplaces() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(10_000)) == .stored)
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(etag: "\"2\""), body: body(100, seed: 9)) == .stored)
        #expect(store.get("k")?.body.array == body(100, seed: 9))
        #expect(store.get("k")?.meta.etag == "\"2\"")
        #expect(store.metrics.entries == 1)
        #expect(store.metrics.bytes == store.blockSize)
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 1)
    }

    /// A 304 renewal: new metadata, the same body and `storedAt`, also after a restart; and every
    /// entry of a source renewed at once.
    @Test func updateRenewsWithoutTheBody() throws {
        let folder = TemporaryFolder()
        let bytes = body(30_000)
        let storedAt: Int64
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(store.put(key: "v1", sourceKey: "a", meta: meta(expires: 100), body: bytes) == .stored)
            #expect(store.put(key: "v2", sourceKey: "a", meta: meta(expires: 100), body: body(10)) == .stored)
            #expect(store.put(key: "other", sourceKey: "b", meta: meta(expires: 100), body: body(10)) == .stored)
            storedAt = try #require(store.get("v1")).storedAt
            let renewed = meta(expires: 200, etag: "\"a much longer entity tag than before\"")
            #expect(store.update(key: "v1", meta: renewed) == .stored)
            #expect(store.get("v1")?.meta == renewed)
            #expect(store.get("v1")?.body.array == bytes)
            #expect(store.update(key: "missing", meta: renewed) == .notFound)
            #expect(store.updateAll(sourceKey: "a") { $0.expires = 300 } == 2)
            #expect(store.metrics.entries == 3)
            #expect(TemporaryFolder.entryFiles(in: folder.path).count == 3)
        }
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let entry = try #require(store.get("v1"))
        #expect(entry.meta.expires == 300)
        #expect(entry.meta.etag == "\"a much longer entity tag than before\"")
        #expect(entry.body.array == bytes)
        #expect(entry.storedAt == storedAt)
        #expect(store.get("v2")?.meta.expires == 300)
        #expect(store.get("other")?.meta.expires == 100)
    }

    /// The file form of a hit: the body's range of an open file, checked.
    @Test func opensTheBodyAsAFileRange() throws {
        let folder = TemporaryFolder()
        let bytes = body(50_000)
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: bytes) == .stored)
        }
        // After a restart, so the first open reads the body through once to check it.
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let opened = try #require(store.openFile("k"))
        #expect(opened.meta == meta())
        #expect(opened.bodyCount == bytes.count)
        var read = [UInt8](repeating: 0, count: bytes.count)
        let count = read.withUnsafeMutableBytes {
            pread(opened.file.rawValue, $0.baseAddress, $0.count, off_t(opened.bodyOffset))
        }
        #expect(count == bytes.count)
        #expect(read == bytes)
        #expect(store.bytesReadSoFar > bytes.count)
        // Checked once: the second open reads only the header.
        let before = store.bytesReadSoFar
        #expect(store.openFile("k") != nil)
        #expect(store.bytesReadSoFar - before <= 4096)
        #expect(store.openFile("nothing") == nil)
    }

    @Test func refusesWhatIsOverABound() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.maxEntryBytes == (1 << 20) / 8)
        let longKey = String(repeating: "k", count: EntryMeta.Limits.keyBytes + 1)
        #expect(store.put(key: longKey, sourceKey: "s", meta: meta(), body: body(10)) == .tooLarge)
        #expect(store.put(key: "k", sourceKey: longKey, meta: meta(), body: body(10)) == .tooLarge)
        var big = meta()
        big.extra = [UInt8](repeating: 0, count: EntryMeta.Limits.extraBytes + 1)
        #expect(store.put(key: "k", sourceKey: "s", meta: big, body: body(10)) == .tooLarge)
        big = meta(etag: String(repeating: "e", count: EntryMeta.Limits.validatorBytes + 1))
        #expect(store.put(key: "k", sourceKey: "s", meta: big, body: body(10)) == .tooLarge)
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(store.maxEntryBytes)) == .tooLarge)
        // The limit is what it says: a key of exactly the bound is stored.
        let keyAtBound = String(repeating: "k", count: EntryMeta.Limits.keyBytes)
        #expect(store.put(key: keyAtBound, sourceKey: keyAtBound, meta: meta(), body: body(10)) == .stored)
        #expect(store.get(keyAtBound)?.key == keyAtBound)
        #expect(store.metrics.rejected == 5)
        #expect(store.metrics.entries == 1)
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 1)
    }

    /// A long header (keys near their bound) is read in two steps by `openFile` and `update`.
    @Test func longHeadersReadBack() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let key = String(repeating: "a", count: 7000)
        #expect(
            store.put(key: key, sourceKey: String(repeating: "b", count: 7000), meta: meta(), body: body(100))
                == .stored)
        #expect(store.openFile(key)?.bodyCount == 100)
        #expect(store.update(key: key, meta: meta(expires: 5)) == .stored)
        #expect(store.get(key)?.meta.expires == 5)
    }
}

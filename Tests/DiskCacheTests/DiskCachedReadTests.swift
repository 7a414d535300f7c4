import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

/// `getIfCached`: the read a polling thread may make — only what the kernel's caches hold, checked
/// as `get` checks it, and nothing deleted or written on that thread.
@Suite struct DiskCachedReadTests {
    @Test func aCachedEntryIsReadInPlaceAndChecked() throws {
        let folder = TemporaryFolder()
        let written = body(20_000)
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: written) == .stored)
        }
        // A new process's store: the entry is not verified yet; the file was just written, so cached.
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let entry = try #require(store.getIfCached("k"))
        #expect(entry.body.array == written)
        #expect(entry.sourceKey == "s")
        #expect(store.metrics.hits == 1)
        #expect(store.getIfCached("absent") == nil)
        #expect(store.getIfCached("k")?.body.array == written)
    }

    @Test func aDamagedFileIsNotReturnedNorDeletedInPlace() throws {
        let folder = TemporaryFolder()
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(20_000)) == .stored)
        }
        let file = folder.at(TemporaryFolder.entryFiles(in: folder.path)[0])
        // One byte of the body flipped: only the checksum can tell.
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        try handle.seek(toOffset: UInt64(fileSize(file) - 100))
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(fileSize(file) - 100))
        try handle.write(contentsOf: [byte ^ 0xFF])
        try handle.close()

        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.getIfCached("k") == nil)
        // Left for `get`, on a thread that may wait, to drop.
        #expect(TemporaryFolder.entryFiles(in: folder.path).count == 1)
        #expect(store.get("k") == nil)
        #expect(store.metrics.corruptDropped == 1)
        #expect(TemporaryFolder.entryFiles(in: folder.path).isEmpty)
    }

    @Test func aLargeUnverifiedBodyIsLeftToGet() throws {
        let folder = TemporaryFolder()
        let large = DiskStore.cachedReadChecksumLimit + 1
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 4 << 20, options: testOptions())
            #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(large)) == .stored)
        }
        let store = try DiskStore(directory: folder.path, budgetBytes: 4 << 20, options: testOptions())
        #expect(store.getIfCached("k") == nil)
        #expect(store.get("k")?.body.count == large)
        // Checked by `get`: from now on read in place.
        #expect(store.getIfCached("k")?.body.count == large)
    }
}

import Foundation
import Primitives
import TestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
    import Glibc
#endif

/// Every kind of damaged file is found when read (or when the folder is opened), deleted, counted
/// and a miss: never returned.
@Suite struct DiskCorruptionTests {
    /// A folder with one entry "k" of `count` body bytes; the store is closed again.
    private func folderWithOneEntry(_ count: Int = 20_000) throws -> (TemporaryFolder, String) {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(count)) == .stored)
        return (folder, folder.at(TemporaryFolder.entryFiles(in: folder.path)[0]))
    }

    /// Opens a store on the folder, asks for "k", and checks that it was a counted, dropped miss.
    private func expectDropped(_ folder: TemporaryFolder, whenRead: Bool = true) throws {
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        if whenRead {
            #expect(store.contains("k"))
            #expect(store.get("k") == nil)
            #expect(store.metrics.misses == 1)
        }
        #expect(store.metrics.corruptDropped == 1)
        #expect(!store.contains("k"))
        #expect(store.metrics.entries == 0)
        #expect(store.metrics.bytes == 0)
        #expect(TemporaryFolder.entryFiles(in: folder.path).isEmpty)
    }

    @Test func aTornFileIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        #expect(truncate(file, off_t(fileSize(file) - 10_000)) == 0)
        try expectDropped(folder)
    }

    /// A file one byte longer than its header says is not the file that was written either.
    @Test func aFileWithTrailingBytesIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { $0.append(0) }
        try expectDropped(folder)
    }

    /// An empty file (what a crash can leave of a file whose data never reached the disk) is found
    /// by its size alone when the folder is opened.
    @Test func anEmptyFileIsDroppedAtOpen() throws {
        let (folder, file) = try folderWithOneEntry()
        #expect(truncate(file, 0) == 0)
        try expectDropped(folder, whenRead: false)
    }

    /// Emptied while the store runs: found when read.
    @Test func anEmptyFileIsDroppedWhenRead() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(100)) == .stored)
        #expect(truncate(folder.at(TemporaryFolder.entryFiles(in: folder.path)[0]), 0) == 0)
        #expect(store.get("k") == nil)
        #expect(store.metrics.corruptDropped == 1)
        #expect(TemporaryFolder.entryFiles(in: folder.path).isEmpty)
    }

    @Test func aFlippedBodyByteIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { $0[$0.count - 5_000] ^= 0x10 }
        try expectDropped(folder)
    }

    /// The same flip found through `openFile`, whose first open in a process checks the body.
    @Test func aFlippedBodyByteIsDroppedByOpenFile() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { $0[$0.count - 1] ^= 0x01 }
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.openFile("k") == nil)
        #expect(store.metrics.corruptDropped == 1)
        #expect(TemporaryFolder.entryFiles(in: folder.path).isEmpty)
    }

    @Test func aBadMagicIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { $0[0] = UInt8(ascii: "X") }
        try expectDropped(folder)
    }

    /// A changed header field (a letter of the content type) fails the header's checksum.
    @Test func aChangedHeaderFieldIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { bytes in
            let type = Array("image/webp".utf8)
            let at = (0..<(bytes.count - type.count)).first { bytes[$0..<($0 + type.count)].elementsEqual(type) }!
            bytes[at] = UInt8(ascii: "x")
        }
        try expectDropped(folder)
    }

    /// A header claiming a length past its bound is refused before anything is allocated for it.
    @Test func anOversizedHeaderLengthIsDropped() throws {
        let (folder, file) = try folderWithOneEntry()
        try rewriteFile(file) { bytes in
            bytes.withUnsafeMutableBytes {
                $0.storeBytes(of: UInt32(1 << 30).littleEndian, toByteOffset: 8, as: UInt32.self)
            }
        }
        try expectDropped(folder)
    }

    /// What a crash leaves (temporary files), entries of another format version and files too short
    /// to be an entry go when the folder is opened; what is not the store's stays.
    @Test func leftoversAreRemovedAtOpen() throws {
        let (folder, _) = try folderWithOneEntry(100)
        let oldFormat = String(repeating: "ab", count: 32) + ".d0"
        let tooShort = EntryName(key: NameDigest(of: "short"), source: NameDigest(of: "s")).fileName
        for name in [".tmp-7", ".tmp-probe", oldFormat, "notes.txt"] {
            #expect(FileManager.default.createFile(atPath: folder.at(name), contents: Data(body(5000))))
        }
        #expect(FileManager.default.createFile(atPath: folder.at(tooShort), contents: Data(body(10))))
        try FileManager.default.createDirectory(atPath: folder.at("subfolder"), withIntermediateDirectories: false)
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        let entry = TemporaryFolder.entryFiles(in: folder.path)
        #expect(folder.names() == ([".lock", "notes.txt", "subfolder"] + entry).sorted())
        #expect(store.metrics.entries == 1)
        #expect(store.metrics.corruptDropped == 1)
        #expect(store.get("k") != nil)
    }

    /// A symbolic link planted under an entry's name is never followed: not when read, not when
    /// the folder is opened, and what it points to is left alone.
    @Test func aPlantedLinkIsNotFollowed() throws {
        let folder = TemporaryFolder()
        let name: String
        do {
            let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
            #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(100)) == .stored)
            name = TemporaryFolder.entryFiles(in: folder.path)[0]
            // A copy of the good entry elsewhere: a followed link would read back as a hit.
            try FileManager.default.copyItem(atPath: folder.at(name), toPath: folder.at("elsewhere"))
            try FileManager.default.removeItem(atPath: folder.at(name))
            try FileManager.default.createSymbolicLink(
                atPath: folder.at(name), withDestinationPath: folder.at("elsewhere"))
            #expect(store.get("k") == nil)
            #expect(!store.contains("k"))
        }
        let reopened = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(reopened.metrics.entries == 0)
        #expect(fileSize(folder.at("elsewhere")) > 100)
    }

    /// A file changed under a store that had read it fine stays fine for `get` (checked on every
    /// read), and the drop leaves a good file renamed over the name alone.
    @Test func aCorruptReadDoesNotDeleteAReplacement() throws {
        let folder = TemporaryFolder()
        let store = try DiskStore(directory: folder.path, budgetBytes: 1 << 20, options: testOptions())
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(3000)) == .stored)
        let name = TemporaryFolder.entryFiles(in: folder.path)[0]
        let node = try #require(store.index.withLock { $0.nodes[NameDigest(of: "k")] })
        let stale = try FileCalls.open(name, in: store.folder, flags: O_RDONLY)
        // A new good file takes the name; dropping through the old descriptor must not delete it.
        #expect(store.put(key: "k", sourceKey: "s", meta: meta(), body: body(4000)) == .stored)
        let dropped: DiskEntry? = store.dropCorrupt(node, stale)
        #expect(dropped == nil)
        #expect(TemporaryFolder.entryFiles(in: folder.path) == [name])
        #expect(store.get("k")?.body.array == body(4000))
    }
}

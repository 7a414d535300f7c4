internal import CDiskShims
internal import Glibc
internal import Primitives

extension DiskStore {
    /// The largest entry `getIfCached` checksums on the caller's thread the first time it is read
    /// in this process: the checksum is CPU work (about 1 µs per KiB), and the caller is one that
    /// answers clients. Larger unverified entries are left to `get`.
    static let cachedReadChecksumLimit = 64 << 10

    /// `get` for a thread that must never wait for the disk (a server's polling thread): the
    /// entry only when its name resolves from the kernel's caches (`openat2` with
    /// `RESOLVE_CACHED`) and its whole file is in the page cache (`preadv2` with `RWF_NOWAIT`),
    /// checked as `get` checks it — its body's checksum only the first time this process reads it,
    /// and not at all above `cachedReadChecksumLimit` (nil then). Nil for anything else: absent,
    /// not cached, cut short, corrupt, a kernel without the calls. Nothing is deleted or written
    /// here; the caller asks `get` on a thread that may wait, which sorts out what is wrong.
    ///
    /// Counts a hit and marks the entry most recently used in memory; its file's modification time
    /// (the recency a restart reads) is left for the next `get` to refresh, since changing it is a
    /// metadata write.
    public func getIfCached(_ key: String) -> DiskEntry? {
        let digest = NameDigest(of: key)
        guard let node = index.withLock({ $0.nodes[digest] }) else { return nil }
        let descriptor = withExtendedLifetime(folder) {
            node.name.fileName.withCString { cdisk_open_cached(folder.rawValue, $0) }
        }
        guard descriptor >= 0 else { return nil }
        let file = FileDescriptor(adopting: descriptor)
        guard let status = try? FileCalls.status(of: file) else { return nil }
        let size = Int(status.st_size)
        guard size >= EntryHeader.fixedBytes, size <= maxEntryBytes else { return nil }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        var handedOver = false
        defer { if !handedOver { storage.deallocate() } }
        let count = withExtendedLifetime(file) { cdisk_pread_nowait(file.rawValue, storage, size, 0) }
        guard count == size else { return nil }
        bytesRead.add(count, ordering: .relaxed)
        let buffer = UnsafeRawBufferPointer(start: storage, count: size)
        guard let (header, headerBytes) = Self.header(ofWhole: buffer), header.key == key else { return nil }
        let verified = index.withLock { _ in node.verified }
        if !verified {
            guard header.bodyBytes <= Self.cachedReadChecksumLimit,
                CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[headerBytes...])) == header.bodyChecksum
            else { return nil }
        }
        index.withLock { index in
            index.metrics.hits += 1
            node.verified = true
            if index.nodes[node.name.key] === node { index.touch(node) }
        }
        handedOver = true
        return DiskEntry(header, storage: storage, headerBytes: headerBytes)
    }
}

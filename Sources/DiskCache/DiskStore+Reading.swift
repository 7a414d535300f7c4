internal import Glibc
internal import Primitives

extension DiskStore {
    /// The entry under `key`, read whole into memory and checked: its size must be its header's
    /// plus its body's, and both checksums must hold. A file that fails is deleted, counted
    /// (`corruptDropped`) and a miss. A hit marks the entry most recently used.
    public func get(_ key: String) -> DiskEntry? {
        guard let node = lookUp(key) else { return nil }
        guard let file = openFile(of: node) else { return nil }
        let size: Int
        do {
            size = Int(try FileCalls.status(of: file).st_size)
        } catch {
            return miss()
        }
        guard size >= EntryHeader.fixedBytes, size <= maxEntryBytes else { return dropCorrupt(node, file) }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        var handedOver = false
        defer { if !handedOver { storage.deallocate() } }
        let buffer = UnsafeMutableRawBufferPointer(start: storage, count: size)
        guard let count = try? FileCalls.read(file, into: buffer, at: 0) else { return miss() }
        bytesRead.add(count, ordering: .relaxed)
        guard count == size, let (header, headerBytes) = Self.header(ofWhole: UnsafeRawBufferPointer(buffer)) else {
            return dropCorrupt(node, file)
        }
        // Another key with the same 128-bit digest: not this entry, and not corrupt.
        guard header.key == key else { return miss() }
        let body = UnsafeRawBufferPointer(rebasing: buffer[headerBytes...])
        guard CRC32C.checksum(body) == header.bodyChecksum else { return dropCorrupt(node, file) }
        hit(node, file, verified: true)
        handedOver = true
        return DiskEntry(header, storage: storage, headerBytes: headerBytes)
    }

    /// The header of a whole entry file read into `buffer`, when it decodes and its sizes add up to
    /// the file's; nil: the file is corrupt.
    static func header(ofWhole buffer: UnsafeRawBufferPointer) -> (header: EntryHeader, size: Int)? {
        guard let decoded = try? EntryHeader.decode(buffer), decoded.size + decoded.header.bodyBytes == buffer.count
        else { return nil }
        return decoded
    }

    /// The entry under `key` as an open file and the range of its body, for a host that sends it
    /// without reading it (`sendfile`). The header and size are checked as `get` checks them; the
    /// body's checksum only the first time in this process (see `DiskEntryFile`).
    public func openFile(_ key: String) -> DiskEntryFile? {
        guard let node = lookUp(key), let opened = open(node) else { return nil }
        let (file, header, headerBytes) = opened
        guard header.key == key else { return miss() }
        let verified = index.withLock { _ in node.verified }
        if !verified {
            guard let bodyChecksum = try? checksum(of: file, from: headerBytes, count: header.bodyBytes),
                bodyChecksum == header.bodyChecksum
            else { return dropCorrupt(node, file) }
        }
        hit(node, file, verified: true)
        return DiskEntryFile(
            key: header.key, sourceKey: header.sourceKey, meta: header.meta, storedAt: header.storedAt, file: file,
            bodyOffset: headerBytes, bodyCount: header.bodyBytes)
    }

    /// The indexed entry under `key`, or nil (a miss, counted).
    private func lookUp(_ key: String) -> IndexNode? {
        let digest = NameDigest(of: key)
        return index.withLock { index in
            guard let node = index.nodes[digest] else {
                index.metrics.misses += 1
                return nil
            }
            return node
        }
    }

    /// Opens `node`'s file; when it is gone (deleted behind the store's back) or a symbolic link
    /// took its name, forgets the entry.
    private func openFile(of node: IndexNode) -> FileDescriptor? {
        do {
            return try FileCalls.open(node.name.fileName, in: folder, flags: O_RDONLY)
        } catch {
            index.withLock { index in
                index.metrics.misses += 1
                guard error.code == ENOENT || error.code == ELOOP, index.nodes[node.name.key] === node else { return }
                _ = index.remove(node.name.key)
            }
            return nil
        }
    }

    /// Opens `node`'s file and reads and checks its header and size (not the body): for
    /// `openFile` and `update`. A corrupt file is dropped.
    func open(_ node: IndexNode) -> (FileDescriptor, EntryHeader, Int)? {
        guard let file = openFile(of: node) else { return nil }
        do {
            let size = Int(try FileCalls.status(of: file).st_size)
            // Most headers fit in the first 4 KiB; a longer one (long keys) takes a second read.
            var bytes = [UInt8](repeating: 0, count: min(size, 4096))
            var count = try bytes.withUnsafeMutableBytes { try FileCalls.read(file, into: $0, at: 0) }
            var headerBytes = try EntryHeader.size(fromFixedPart: bytes[..<count])
            if headerBytes > count, headerBytes <= size {
                bytes = [UInt8](repeating: 0, count: headerBytes)
                count = try bytes.withUnsafeMutableBytes { try FileCalls.read(file, into: $0, at: 0) }
            }
            bytesRead.add(count, ordering: .relaxed)
            let decoded = try EntryHeader.decode(bytes[..<count])
            let header = decoded.header
            headerBytes = decoded.size
            guard headerBytes + header.bodyBytes == size else { return dropCorrupt(node, file) }
            return (file, header, headerBytes)
        } catch is EntryHeader.Fault {
            return dropCorrupt(node, file)
        } catch {
            return miss()
        }
    }

    /// The CRC-32C of `count` bytes of `file` from `offset`, read in 64 KiB pieces.
    private func checksum(of file: FileDescriptor, from offset: Int, count: Int) throws(SystemError) -> UInt32 {
        var crc: UInt32 = 0
        let piece = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 16)
        defer { piece.deallocate() }
        var done = 0
        while done < count {
            let wanted = min(piece.count, count - done)
            let got = try FileCalls.read(
                file, into: UnsafeMutableRawBufferPointer(rebasing: piece[..<wanted]), at: offset + done)
            guard got == wanted else { throw SystemError(operation: "read", code: EIO) }
            crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: piece[..<wanted]), continuing: crc)
            done += wanted
        }
        bytesRead.add(count, ordering: .relaxed)
        return crc
    }

    /// Counts a hit, marks the entry most recently used and, at most once per `touchInterval`,
    /// sets its file's modification time (through the open descriptor, so never another file's).
    private func hit(_ node: IndexNode, _ file: FileDescriptor, verified: Bool) {
        let now = options.clock.monotonic()
        let interval = options.touchInterval
        let touch = index.withLock { index -> Bool in
            index.metrics.hits += 1
            if verified { node.verified = true }
            guard index.nodes[node.name.key] === node else { return false }
            index.touch(node)
            guard now - node.touchedAt >= interval else { return false }
            node.touchedAt = now
            return true
        }
        if touch { FileCalls.setModified(file, wallNanoseconds: options.clock.wallNanoseconds()) }
    }

    private func miss<T>() -> T? {
        index.withLock { $0.metrics.misses += 1 }
        return nil
    }

    /// Deletes a corrupt file and forgets its entry: counted as dropped and as a miss. The name is
    /// deleted only while it still shows the file that was read (same inode): a good file renamed
    /// over it meanwhile stays. Under the writer lock, so no rename can come between the check
    /// and the deletion.
    func dropCorrupt<T>(_ node: IndexNode, _ file: FileDescriptor) -> T? {
        let name = node.name.fileName
        writer.withLock { _ in
            if let read = try? FileCalls.status(of: file), let named = try? FileCalls.status(of: name, in: folder),
                read.st_ino == named.st_ino, read.st_dev == named.st_dev
            {
                try? FileCalls.unlink(name, in: folder)
            }
            index.withLock { index in
                index.metrics.corruptDropped += 1
                index.metrics.misses += 1
                if index.nodes[node.name.key] === node { _ = index.remove(node.name.key) }
            }
        }
        return nil
    }
}

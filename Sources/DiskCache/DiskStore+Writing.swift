internal import Glibc
internal import Primitives

extension DiskStore {
    /// Stores `body` under `key`, replacing any entry there. Synchronous: it returns once the file
    /// is renamed into place (or the write failed), so call it off any thread that answers
    /// clients. Never throws: a cache that cannot store something just does not have it.
    ///
    /// The room is reserved first (evicting least recently used entries), then the header and body
    /// go to a temporary file in the folder, which is renamed over the entry's name: a reader
    /// sees the old file or the new one, never part of one. Not synced (see
    /// `DiskStoreOptions.syncEachWrite`).
    public func put(key: String, sourceKey: String, meta: EntryMeta, body: UnsafeRawBufferPointer) -> DiskPutResult {
        var header = EntryHeader(
            key: key, sourceKey: sourceKey, meta: meta,
            storedAt: options.clock.wallNanoseconds() / 1_000_000_000, bodyBytes: body.count, bodyChecksum: 0)
        guard header.isWithinLimits, body.count <= maxEntryBytes else { return rejected(.tooLarge) }
        header.bodyChecksum = CRC32C.checksum(body)
        let encoded = header.encoded()
        let name = EntryName(key: NameDigest(of: key), source: NameDigest(of: sourceKey))
        return encoded.withUnsafeBytes { headerBytes in
            write(name, fileBytes: encoded.count + body.count, verified: true) { (file, fault) throws(SystemError) in
                try FileCalls.write(file, [headerBytes, body], fault: fault)
            }
        }
    }

    /// `put` for a body in an array.
    public func put(key: String, sourceKey: String, meta: EntryMeta, body: [UInt8]) -> DiskPutResult {
        body.withUnsafeBytes { put(key: key, sourceKey: sourceKey, meta: meta, body: $0) }
    }

    /// Replaces the metadata of the entry under `key` (a `304` renewed it), keeping its body and
    /// `storedAt`. The file is rewritten as a `put` writes one (a new header, then the body copied
    /// from the old file in the kernel, then a rename): rewriting the header in place would show a
    /// reader half a header, and a header of another length would not fit.
    public func update(key: String, meta: EntryMeta) -> DiskPutResult {
        let digest = NameDigest(of: key)
        guard let node = index.withLock({ $0.nodes[digest] }) else { return .notFound }
        return rewrite(node, key: key) { $0 = meta }
    }

    /// Changes the metadata of every entry of a source (a `304` for the source renews everything
    /// made from it), each rewritten as `update` does. How many were rewritten.
    @discardableResult
    public func updateAll(sourceKey: String, _ change: (inout EntryMeta) -> Void) -> Int {
        let source = NameDigest(of: sourceKey)
        let nodes = index.withLock { index in (index.bySource[source] ?? []).compactMap { index.nodes[$0] } }
        return nodes.reduce(0) { count, node in rewrite(node, key: nil, change) == .stored ? count + 1 : count }
    }

    /// Rewrites `node`'s file with changed metadata; `key`, when given, must be the one in its header.
    private func rewrite(_ node: IndexNode, key: String?, _ change: (inout EntryMeta) -> Void) -> DiskPutResult {
        guard let opened = open(node) else { return .notFound }
        let (file, header, headerBytes) = opened
        if let key, header.key != key { return .notFound }
        var updated = header
        change(&updated.meta)
        guard updated.isWithinLimits else { return rejected(.tooLarge) }
        let encoded = updated.encoded()
        let verified = index.withLock { _ in node.verified }
        return encoded.withUnsafeBytes { newHeader in
            write(node.name, fileBytes: encoded.count + header.bodyBytes, verified: verified) {
                (target, fault) throws(SystemError) in
                try FileCalls.write(target, [newHeader], fault: fault)
                try FileCalls.copy(from: file, at: headerBytes, count: header.bodyBytes, to: target, fault: fault)
            }
        }
    }

    private typealias Contents = (FileDescriptor, (@Sendable () -> Int32?)?) throws(SystemError) -> Void

    /// The three steps of every write. 1: under the writer lock, reserve the room (evicting) and
    /// mark the key as being written. 2: with no lock, write a temporary file. 3: under the writer
    /// lock again, rename it into place and index it, unless a removal cancelled it meanwhile.
    private func write(_ name: EntryName, fileBytes: Int, verified: Bool, contents: Contents) -> DiskPutResult {
        let cost = Self.roundUp(fileBytes, to: blockSize)
        guard cost <= maxEntryBytes else { return rejected(.tooLarge) }
        let temporary: String
        switch reserve(name, cost: cost) {
        case .success(let file): temporary = file
        case .failure(let refusal): return refusal.result
        }
        do {
            let file = try FileCalls.open(temporary, in: folder, flags: O_WRONLY | O_CREAT | O_EXCL)
            try contents(file, options.faults.writeError)
            if options.syncEachWrite { try FileCalls.sync(file) }
            // The recency a restart reads back: set here, from the store's clock, not left to the
            // kernel's coarse timestamp (two writes in one tick would tie).
            FileCalls.setModified(file, wallNanoseconds: options.clock.wallNanoseconds())
        } catch {
            try? FileCalls.unlink(temporary, in: folder)
            return writer.withLock { _ in failed(name, error) }
        }
        options.faults.beforeRename?()
        return writer.withLock { _ in
            let cancelled = index.withLock { $0.pending[name.key]?.cancelled ?? true }
            if cancelled {
                try? FileCalls.unlink(temporary, in: folder)
                index.withLock { $0.endWrite(name.key) }
                return .cancelled
            }
            do throws(SystemError) {
                try FileCalls.rename(temporary, to: name.fileName, in: folder)
            } catch {
                try? FileCalls.unlink(temporary, in: folder)
                return failed(name, error)
            }
            let node = IndexNode(
                name: name, fileBytes: fileBytes, cost: cost, touchedAt: options.clock.monotonic(), verified: verified)
            index.withLock { index in
                index.endWrite(name.key)
                // The entry it replaces (if any) was renamed over: no file to delete.
                _ = index.install(node)
                index.metrics.writes += 1
                index.writesStoppedUntil = nil
            }
            return .stored
        }
    }

    /// Why a write was not begun.
    private struct Refusal: Error {
        let result: DiskPutResult
    }

    /// Step 1 of `write`: the temporary file's name, or why not.
    private func reserve(_ name: EntryName, cost: Int) -> Result<String, Refusal> {
        let now = options.clock.monotonic()
        return writer.withLock { counter -> Result<String, Refusal> in
            let admitted = index.withLock { index -> Result<[IndexNode], Refusal> in
                if let until = index.writesStoppedUntil, now < until {
                    index.metrics.rejected += 1
                    return .failure(Refusal(result: .writesDisabled))
                }
                // Another write of the key, or room held by writes in progress that no eviction frees.
                guard index.pending[name.key] == nil, index.reservedBytes + cost <= budgetBytes,
                    index.pending.count < maxEntries
                else {
                    index.metrics.rejected += 1
                    return .failure(Refusal(result: .busy))
                }
                var victims: [IndexNode] = []
                while index.bytes + cost > budgetBytes || index.nodes.count + index.pending.count >= maxEntries,
                    let victim = index.oldest
                {
                    _ = index.remove(victim.name.key)
                    index.metrics.evictions += 1
                    victims.append(victim)
                }
                index.pending[name.key] = PendingWrite(source: name.source, reserved: cost)
                index.reservedBytes += cost
                return .success(victims)
            }
            // Deleted before the new file exists: the folder stays within the budget throughout.
            let victims: [IndexNode]
            switch admitted {
            case .success(let nodes): victims = nodes
            case .failure(let refusal): return .failure(refusal)
            }
            for victim in victims { try? FileCalls.unlink(victim.name.fileName, in: folder) }
            counter += 1
            return .success(EntryName.temporaryPrefix + String(counter))
        }
    }

    /// Ends a failed write: hands back its room, counts it, and stops writes after a disk fault.
    /// Called under the writer lock.
    private func failed(_ name: EntryName, _ error: SystemError) -> DiskPutResult {
        let isFault = Self.stoppingErrors.contains(error.code)
        let retryAt = options.clock.monotonic() + options.writeRetryInterval
        index.withLock { index in
            index.endWrite(name.key)
            index.metrics.writeFailures += 1
            index.metrics.lastWriteError = error
            if isFault { index.writesStoppedUntil = retryAt }
        }
        return .failed(error, stoppedWrites: isFault)
    }

    /// The errors that say the disk or the folder will not take writes for a while: writes stop.
    /// Others (out of descriptors, out of memory) fail only the write they hit.
    static let stoppingErrors: Set<Int32> = [ENOSPC, EDQUOT, EIO, EROFS, EFBIG, EACCES, EPERM]

    private func rejected(_ result: DiskPutResult) -> DiskPutResult {
        index.withLock { $0.metrics.rejected += 1 }
        return result
    }
}

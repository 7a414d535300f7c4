internal import Glibc
internal import Primitives
internal import Synchronization

/// A bounded store of keyed bodies in one folder that survives restarts: the disk tier behind
/// thumbd's memory cache. It knows nothing of images or HTTP: a key, the key of the source it
/// belongs to (for a purge), an `EntryMeta` and the body's bytes.
///
/// - One file per entry, named after the SHA-256 of its key and of its source key
///   (`EntryName`), holding a checksummed header (`EntryHeader`) and the body. A write goes to a
///   temporary file in the folder and is renamed into place, so a name only ever shows a whole
///   file; a file cut short, empty or corrupted fails its length or a checksum when read, is
///   deleted and is a miss, never returned.
/// - Opening reads the folder's names and each file's `stat`, never a header or a body: the
///   names say key and source, the size is the charge, the modification time the recency.
/// - The folder never holds more than `budgetBytes`, counting each file's size rounded up to the
///   filesystem block: a write reserves its room (evicting least recently used entries) before its
///   temporary file exists.
/// - Recency is exact in memory; on disk it is the file's modification time, refreshed by a hit
///   at most once per `touchInterval`, so a restart orders the entries to within that interval.
/// - A disk fault while writing stops writes for `writeRetryInterval`; reads go on.
/// - An exclusive `flock` on `.lock` keeps every other store out of the folder.
///
/// Every method may be called from any thread; each blocks on file I/O, so none belongs on a
/// thread that must not wait for the disk. The store starts no thread of its own.
///
/// Locks: `writer` serialises every change to the folder's names (rename, unlink) with the index
/// changes that go with it, so the index and the folder never disagree; `index` guards the
/// in-memory index and is held only for lookups and list moves, never across a system call.
/// Order: `writer` before `index`. Reads take only `index` (dropping a corrupt file also takes
/// `writer`), so a slow rename never holds up a hit.
public final class DiskStore: Sendable {
    public let directory: String
    public let budgetBytes: Int
    /// The filesystem's block size (`statvfs`): every entry's charge is a multiple of it.
    public let blockSize: Int
    public let maxEntries: Int
    public let maxEntryBytes: Int

    let options: DiskStoreOptions
    let folder: FileDescriptor
    private let lock: FolderLock
    let index: Locked<DiskIndex>
    /// The next temporary file's number; the lock also serialises name changes (see above).
    let writer = Locked(UInt64(0))
    /// Bytes read from entry files: how a test proves that opening a folder reads none.
    let bytesRead = Atomic<Int>(0)

    /// Opens (creating it if missing) the folder as a store of at most `budgetBytes`, taking its
    /// lock and indexing what a previous run left, without reading any file's contents. Removes
    /// temporary files a crash left, entries of another format version and empty ones, then the
    /// least recently used entries past the budget (it may have been lowered since).
    ///
    /// Throws when the folder cannot be used (see `DiskStoreError.Reason`), including when another
    /// store holds it.
    public init(directory: String, budgetBytes: Int, options: DiskStoreOptions = DiskStoreOptions())
        throws(DiskStoreError)
    {
        let folder = try FolderCheck.open(directory)
        let blockSize = FolderCheck.blockSize(of: folder)
        guard budgetBytes >= blockSize else { throw DiskStoreError(directory: directory, reason: .invalidBudget) }
        let lock = try FolderLock.acquire(in: folder, path: directory)
        let scan = try FolderScan.run(folder, path: directory)
        try FolderCheck.probeWritable(folder, path: directory)

        let maxEntries = max(1, options.maxEntries ?? budgetBytes / blockSize)
        let maxEntryBytes = min(budgetBytes, options.maxEntryBytes ?? budgetBytes / 8)
        self.directory = directory
        self.budgetBytes = budgetBytes
        self.blockSize = blockSize
        self.maxEntries = maxEntries
        self.maxEntryBytes = maxEntryBytes
        self.options = options
        self.folder = folder
        self.lock = lock

        var index = DiskIndex(budget: budgetBytes)
        index.metrics.corruptDropped = scan.dropped
        let monotonic = options.clock.monotonic()
        let wall = options.clock.wallNanoseconds()
        var excess: [EntryName] = []
        // Oldest first, each installed as the most recent: the list ends in modification order.
        for found in scan.entries.sorted(by: { $0.modified < $1.modified }) {
            let cost = Self.roundUp(found.fileBytes, to: blockSize)
            // Stored under a larger bound than today's: it could not be stored now, so it goes.
            guard cost <= maxEntryBytes else {
                excess.append(found.name)
                index.metrics.evictions += 1
                continue
            }
            let age = Duration.nanoseconds(max(0, wall - found.modified))
            let node = IndexNode(
                name: found.name, fileBytes: found.fileBytes, cost: cost, touchedAt: monotonic - age, verified: false)
            _ = index.install(node)
        }
        // The budget (or the entry bound) may have been lowered since: least recent go first.
        while index.bytes > budgetBytes || index.nodes.count > maxEntries, let victim = index.oldest {
            _ = index.remove(victim.name.key)
            index.metrics.evictions += 1
            excess.append(victim.name)
        }
        self.index = Locked(index)
        for name in excess { try? FileCalls.unlink(name.fileName, in: folder) }
    }

    // The recency list links its nodes both ways with strong references, a cycle only unlinking
    // breaks.
    deinit {
        index.withLock { $0.releaseAll() }
    }

    /// Lets another store open the folder while this object still exists: for a host that has
    /// stopped using it (its last write done) and may start a new store on the same folder in the
    /// same process — the service stopping, then started again by a test. Nothing may use this
    /// store afterwards. (A process that ends releases the lock by itself.)
    public func releaseLock() { lock.release() }

    /// The counters now.
    public var metrics: DiskStoreMetrics { index.withLock { $0.snapshot } }

    /// Whether an entry is indexed under `key`: no file is read and nothing is counted (a
    /// corrupt file is only found by reading it).
    public func contains(_ key: String) -> Bool {
        let digest = NameDigest(of: key)
        return index.withLock { $0.nodes[digest] != nil }
    }

    /// Removes the entry under `key`, and stops a write of it in progress from being renamed into
    /// place. Whether an entry was removed.
    @discardableResult
    public func remove(_ key: String) -> Bool {
        let digest = NameDigest(of: key)
        return writer.withLock { _ in
            let node = index.withLock { index -> IndexNode? in
                index.pending[digest]?.cancelled = true
                guard let node = index.remove(digest) else { return nil }
                index.metrics.removals += 1
                return node
            }
            guard let node else { return false }
            try? FileCalls.unlink(node.name.fileName, in: folder)
            return true
        }
    }

    /// Removes every entry of a source (indexed at start-up or written since), and stops the
    /// writes of its entries in progress from being renamed into place: a purge is never undone
    /// by a write that began before it.
    @discardableResult
    public func removeAll(sourceKey: String) -> DiskRemoval {
        let source = NameDigest(of: sourceKey)
        return writer.withLock { _ in
            let removed = index.withLock { index -> [IndexNode] in
                for (key, write) in index.pending where write.source == source { index.pending[key]?.cancelled = true }
                let nodes = (index.bySource[source] ?? []).compactMap { index.remove($0) }
                index.metrics.removals += nodes.count
                return nodes
            }
            for node in removed { try? FileCalls.unlink(node.name.fileName, in: folder) }
            return DiskRemoval(entries: removed.count, bytes: removed.reduce(0) { $0 + $1.cost })
        }
    }

    static func roundUp(_ bytes: Int, to block: Int) -> Int { (bytes + block - 1) / block * block }
}

// What reflection shows (`dump`, a failed test expectation): the folder and the counters. Without
// it, reflection would copy the stored fields, and `bytesRead` (an `Atomic`) and the index's state
// cannot be copied: the runtime traps.
extension DiskStore: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["directory": directory, "budgetBytes": budgetBytes, "metrics": metrics])
    }
}

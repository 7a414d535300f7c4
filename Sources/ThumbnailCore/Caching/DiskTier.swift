public import DiskCache
internal import Glibc
public import Primitives

/// The disk tier behind the memory cache: a `DiskStore` with the threads that use it, so that no
/// thread that answers clients ever waits for the disk.
///
/// - Reads run on `readers` threads (2 by default) from a bounded queue: a memory miss asks
///   `mayHave` (the store's index, no I/O) and, when the entry may be there, `read` queues the
///   lookup and calls back from a reader thread. A full queue is a plain miss (the request goes on
///   to the origin), never a wait.
/// - Writes, renewals, removals and purges run in order on one writer thread, below the priority of
///   everything that answers clients, from a bounded queue: writes past the bound are dropped and
///   counted (the entry is still in memory; the disk misses it), the rest are small and never
///   dropped. A purge goes to the front of the queue, takes out the writes of its source still
///   waiting, and marks its source so that no read answers from it until the files are gone.
///
/// Keys are the memory cache's `CacheKey` as text (kind, canonical source URL, canonical spec);
/// the source key is the canonical source URL, which a purge names. What else decides whether a
/// stored variant may be served (the animation limits it was made under) travels in its record
/// (`DiskRecord`), checked by the pipeline when it reads one back.
public final class DiskTier: Sendable {
    public let store: DiskStore
    let limits: Limits
    private let reads: Monitor<ReadQueue>
    private let writes: Monitor<WriteQueue>
    /// What readers check on every read: a lock of its own, since every use of the write queue's
    /// `Monitor` wakes the writer thread.
    private let purges = Locked(PurgeState())
    /// Counters of this tier's own (the store keeps its own).
    private let counters = Locked(DiskTierMetrics())
    private let onEvent: @Sendable (DiskTierEvent) -> Void

    /// How much the tier queues and how many threads it runs. Every field has its default here.
    public struct Limits: Sendable {
        /// Threads that read entries (each read is one open, one read, one checksum).
        public var readers = 2
        /// Reads waiting for a reader; past it a memory miss skips the disk.
        public var readQueue = 256
        /// Writes queued or being written, and the bytes they hold (they keep their bodies alive).
        public var writeQueue = 512
        public var writeQueueBytes = 64 << 20
        /// How long `stop` lets the writer finish what is queued.
        public var stopGrace: Duration = .seconds(5)

        public init() {}
    }

    /// Takes over `store` and starts the reader and writer threads. `onEvent` hears what an operator must (writes stopped, resumed), on the writer thread.
    public init(
        store: DiskStore, limits: Limits = Limits(),
        onEvent: @escaping @Sendable (DiskTierEvent) -> Void = { _ in }
    ) throws(SystemError) {
        self.store = store
        self.limits = limits
        self.reads = Monitor(ReadQueue())
        self.writes = Monitor(WriteQueue())
        self.onEvent = onEvent
        for number in 0..<max(1, limits.readers) {
            try DetachedThread.start(name: "thumbd-disk-r\(number)", stackSize: 256 << 10) { [self] in readLoop() }
        }
        // Writes yield the cores to everything that answers clients.
        try DetachedThread.start(name: "thumbd-disk-w", stackSize: 256 << 10, niceness: 10) { [self] in writeLoop() }
    }

    // MARK: Keys

    /// Wall-clock seconds since 1970 UTC: what a disk entry's expiry is written in, since the next
    /// process cannot read this one's monotonic clock.
    static func wallSeconds() -> Int64 { Int64(time(nil)) }

    /// The store's key for `key`.
    func storeKey(_ key: CacheKey) -> String { key.description }

    // MARK: Reading

    /// Whether the store's index has an entry under `key` (no I/O): worth a `read`.
    public func mayHave(_ key: CacheKey) -> Bool { store.contains(storeKey(key)) }

    /// Reads the entry under `key` on a reader thread and calls `completion` there with it, or nil
    /// (absent, corrupt — then dropped —, or its source being purged). Returns false, and never
    /// calls `completion`, when the read queue is full or the tier is stopping.
    public func read(_ key: CacheKey, completion: @escaping @Sendable (DiskEntry?) -> Void) -> Bool {
        let job = ReadJob(key: storeKey(key), sourceKey: key.source.description, completion: completion)
        let queued = reads.withLock { queue -> Bool in
            guard !queue.stopping, queue.jobs.count < limits.readQueue else { return false }
            queue.jobs.append(job)
            return true
        }
        if !queued { counters.withLock { $0.readQueueFull += 1 } }
        return queued
    }

    /// The entry under `key` read on the calling thread, only if that needs no wait for the disk
    /// (`DiskStore.getIfCached`), with the purge generation it was read in (`noPurgeSince`); nil
    /// otherwise — then `read` on a reader thread.
    public func readNow(_ key: CacheKey) -> (entry: DiskEntry, generation: UInt64)? {
        let sourceKey = key.source.description
        let before = purges.withLock { $0.purging[sourceKey] == nil ? $0.begun : nil }
        guard let before, let entry = store.getIfCached(storeKey(key)) else { return nil }
        return (entry, before)
    }

    /// Whether no purge has begun since `generation` (from `readNow`): asked where what was read is
    /// stored, under the lock a purge clears the memory under, so that a purge that began during
    /// the read cannot be undone by it.
    public func noPurgeSince(_ generation: UInt64) -> Bool { purges.withLock { $0.begun == generation } }

    private func readLoop() {
        while let job = reads.wait(
            until: { $0.stopping || !$0.jobs.isEmpty }, then: { $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() })
        {
            var entry = store.get(job.key)
            // A purge in progress: its files may not be gone yet, but it must already not be served.
            if entry != nil, purges.withLock({ $0.purging[job.sourceKey] != nil }) { entry = nil }
            job.completion(entry)
        }
    }

    // MARK: Writing

    /// Queues a write of `bytes` under `key`; dropped (and counted) when the queue is full.
    public func write(_ key: CacheKey, meta: EntryMeta, bytes: ImageBytes) {
        let write = PendingPut(
            key: storeKey(key), sourceKey: key.source.description, meta: meta, bytes: bytes)
        let queued = writes.withLock { queue -> Bool in
            guard !queue.stopping, queue.puts < limits.writeQueue,
                queue.putBytes + bytes.count <= limits.writeQueueBytes
            else { return false }
            queue.ops.append(.put(write))
            queue.puts += 1
            queue.putBytes += bytes.count
            return true
        }
        if !queued { counters.withLock { $0.writesDropped += 1 } }
    }

    /// Queues a new expiry (wall-clock seconds) for every entry of `source`: a revalidation said
    /// it had not changed.
    public func renew(_ source: SourceURL, expires: Int64) {
        enqueue(.renew(sourceKey: source.description, expires: expires))
    }

    /// Queues the removal of the entry under `key`.
    public func remove(_ key: CacheKey) { enqueue(.remove(key: storeKey(key))) }

    /// Removes every entry of `source` — from now on for readers, on disk as soon as the writer gets
    /// to it (it goes first). Writes of the source still queued are dropped. `completion`, if any,
    /// hears what was removed, on the writer thread.
    public func purge(_ source: SourceURL, completion: (@Sendable (DiskRemoval) -> Void)? = nil) {
        let sourceKey = source.description
        // Marked before anything else: from here on no read answers from the source.
        purges.withLock { state in
            state.begun &+= 1
            state.purging[sourceKey, default: 0] += 1
        }
        let queued = writes.withLock { queue -> Bool in
            // Stopping: the writer may be gone; removed on this thread instead (below).
            guard !queue.stopping else { return false }
            var kept: [WriteOp] = []
            for op in queue.ops {
                if case .put(let put) = op, put.sourceKey == sourceKey {
                    queue.puts -= 1
                    queue.putBytes -= put.bytes.count
                    continue
                }
                kept.append(op)
            }
            queue.ops = [.purge(sourceKey: sourceKey, completion: completion)] + kept
            return true
        }
        if !queued {
            let removed = store.removeAll(sourceKey: sourceKey)
            endPurge(sourceKey)
            completion?(removed)
        }
    }

    /// The files of one purge of `sourceKey` are gone: its mark goes (another purge of the source
    /// may still hold one).
    private func endPurge(_ sourceKey: String) {
        purges.withLock { state in
            state.purging[sourceKey, default: 1] -= 1
            if state.purging[sourceKey] == 0 { state.purging[sourceKey] = nil }
        }
    }

    private func enqueue(_ op: WriteOp) {
        writes.withLock { queue in
            guard !queue.stopping else { return }
            queue.ops.append(op)
        }
    }

    private func writeLoop() {
        var stopped = false
        while let op = writes.wait(
            until: { $0.stopping || !$0.ops.isEmpty }, then: { $0.ops.isEmpty ? nil : $0.ops.removeFirst() })
        {
            switch op {
            case .put(let put):
                let result = put.bytes.withUnsafeBytes {
                    store.put(key: put.key, sourceKey: put.sourceKey, meta: put.meta, body: $0)
                }
                writes.withLock { queue in
                    queue.puts -= 1
                    queue.putBytes -= put.bytes.count
                }
                stopped = report(result, wasStopped: stopped)
            case .renew(let sourceKey, let expires):
                store.updateAll(sourceKey: sourceKey) { $0.expires = expires }
            case .remove(let key):
                store.remove(key)
            case .purge(let sourceKey, let completion):
                let removed = store.removeAll(sourceKey: sourceKey)
                endPurge(sourceKey)
                completion?(removed)
            }
        }
        writes.withLock { $0.writerEnded = true }
    }

    /// Tells the operator when writes stop after a disk fault, and when they work again. Returns
    /// whether they are stopped now.
    private func report(_ result: DiskPutResult, wasStopped: Bool) -> Bool {
        switch result {
        case .failed(let error, stoppedWrites: true):
            if !wasStopped { onEvent(.writesStopped(error)) }
            return true
        case .stored:
            if wasStopped { onEvent(.writesResumed) }
            return false
        default:
            return wasStopped
        }
    }

    // MARK: Stopping

    /// Stops the readers (reads still queued hear nil) and lets the writer finish its queue for up
    /// to `Limits.stopGrace`; what is left then is dropped (those entries are only in memory).
    /// Returns once the writer is done or the grace is over.
    public func stop() {
        let abandoned = reads.withLock { queue -> [ReadJob] in
            queue.stopping = true
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in abandoned { job.completion(nil) }
        writes.withLock { $0.stopping = true }
        // The folder is let go only once nothing writes to it any more.
        if writes.wait(until: { $0.writerEnded }, timeout: limits.stopGrace) { store.releaseLock() }
    }

    // MARK: Metrics

    /// The store's counters with the tier's own and its queues.
    public var metrics: DiskTierMetrics {
        var metrics = counters.withLock { $0 }
        metrics.store = store.metrics
        (metrics.writeQueue, metrics.writeQueueBytes) = writes.withLock { ($0.puts, $0.putBytes) }
        return metrics
    }

    /// Counts an entry read that was answered (the pipeline decided it was usable).
    func countServed() { counters.withLock { $0.served += 1 } }

    /// Counts an entry read back that could not be used (its metadata unreadable or another
    /// version of its source in memory): it is removed.
    func countUnusable() { counters.withLock { $0.unusable += 1 } }
}

/// What the disk tier tells the operator (the service logs it).
public enum DiskTierEvent: Sendable, Equatable {
    /// A write failed with a disk fault: writes are stopped (retried after a while); reads go on.
    case writesStopped(SystemError)
    /// A write succeeded again after writes had stopped.
    case writesResumed
}

private struct ReadJob {
    let key: String
    let sourceKey: String
    let completion: @Sendable (DiskEntry?) -> Void
}

private struct ReadQueue {
    var jobs: [ReadJob] = []
    var stopping = false
}

private struct PendingPut {
    let key: String
    let sourceKey: String
    let meta: EntryMeta
    let bytes: ImageBytes
}

private enum WriteOp {
    case put(PendingPut)
    case renew(sourceKey: String, expires: Int64)
    case remove(key: String)
    case purge(sourceKey: String, completion: (@Sendable (DiskRemoval) -> Void)?)
}

private struct WriteQueue {
    var ops: [WriteOp] = []
    /// Queued puts and the bytes they hold (the bound of the queue).
    var puts = 0
    var putBytes = 0
    var stopping = false
    var writerEnded = false
}

private struct PurgeState {
    /// Sources whose purge is queued or running, with how many: not served from disk meanwhile.
    var purging: [String: Int] = [:]
    /// Purges begun so far (`DiskTier.readNow`, `noPurgeSince`).
    var begun: UInt64 = 0
}

/// One entry on disk, as the index knows it: no key, no metadata (those are in the file's header
/// and the start-up scan never reads them), only what the budget, the recency order and a purge
/// need.
final class IndexNode: @unchecked Sendable {
    let name: EntryName
    /// The file's exact size: header + body.
    let fileBytes: Int
    /// `fileBytes` rounded up to the filesystem block: what the budget is charged.
    let cost: Int
    /// When a hit last refreshed the file's modification time (see `DiskStoreOptions.touchInterval`).
    var touchedAt: ContinuousClock.Instant
    /// The body's checksum is known good in this process: written by it, or read through once.
    var verified: Bool
    var newer: IndexNode?
    // Both links are strong: a node is always unlinked before it is dropped, which breaks the cycle.
    var older: IndexNode?

    init(name: EntryName, fileBytes: Int, cost: Int, touchedAt: ContinuousClock.Instant, verified: Bool) {
        self.name = name
        self.fileBytes = fileBytes
        self.cost = cost
        self.touchedAt = touchedAt
        self.verified = verified
    }
}

/// A `put` or `update` between reserving its room and renaming its file into place.
struct PendingWrite {
    let source: NameDigest
    /// Charged to the budget from the start, so that the folder never holds more than the budget
    /// even while the temporary file and the entry it replaces both exist.
    let reserved: Int
    /// Set by `remove` and `removeAll(sourceKey:)`: the file must not be renamed into place.
    var cancelled = false
}

/// Everything the store keeps under its index lock: the entries by key digest, one recency list
/// (least recently used at `oldest`), every key of a source, the writes in progress and the
/// counters. Private helpers on it assume the lock is held.
struct DiskIndex: ~Copyable {
    var nodes: [NameDigest: IndexNode] = [:]
    var bySource: [NameDigest: Set<NameDigest>] = [:]
    var oldest: IndexNode?
    var newest: IndexNode?
    var pending: [NameDigest: PendingWrite] = [:]
    /// What the installed entries cost.
    var installedBytes = 0
    /// What the pending writes reserved.
    var reservedBytes = 0
    var metrics: DiskStoreMetrics
    /// Writes are stopped until this instant (after a disk fault); nil: they are not.
    var writesStoppedUntil: ContinuousClock.Instant?

    init(budget: Int) {
        metrics = DiskStoreMetrics()
        metrics.budgetBytes = budget
    }

    /// Adds `node` as the most recently used, in place of any entry under its key (returned).
    mutating func install(_ node: IndexNode) -> IndexNode? {
        let replaced = remove(node.name.key)
        nodes[node.name.key] = node
        bySource[node.name.source, default: []].insert(node.name.key)
        push(node)
        installedBytes += node.cost
        return replaced
    }

    /// Takes the entry under `key` out of the index (its file is the caller's to delete).
    mutating func remove(_ key: NameDigest) -> IndexNode? {
        guard let node = nodes.removeValue(forKey: key) else { return nil }
        unlink(node)
        bySource[node.name.source]?.remove(key)
        if bySource[node.name.source]?.isEmpty == true { bySource.removeValue(forKey: node.name.source) }
        installedBytes -= node.cost
        return node
    }

    /// Marks `node` most recently used.
    mutating func touch(_ node: IndexNode) {
        guard newest !== node else { return }
        unlink(node)
        push(node)
    }

    /// What the folder holds or is about to: never more than the budget.
    var bytes: Int { installedBytes + reservedBytes }

    /// Ends a pending write (renamed, failed or cancelled), handing back its reservation.
    mutating func endWrite(_ key: NameDigest) {
        guard let write = pending.removeValue(forKey: key) else { return }
        reservedBytes -= write.reserved
    }

    /// Unlinks every node, breaking the list's reference cycles (the store is going away).
    mutating func releaseAll() {
        for node in nodes.values {
            node.newer = nil
            node.older = nil
        }
        oldest = nil
        newest = nil
    }

    /// The counters, with the live sizes.
    var snapshot: DiskStoreMetrics {
        var metrics = metrics
        metrics.entries = nodes.count
        metrics.bytes = bytes
        metrics.writesDisabled = writesStoppedUntil != nil
        return metrics
    }

    private mutating func unlink(_ node: IndexNode) {
        if let older = node.older { older.newer = node.newer } else { oldest = node.newer }
        if let newer = node.newer { newer.older = node.older } else { newest = node.older }
        node.newer = nil
        node.older = nil
    }

    private mutating func push(_ node: IndexNode) {
        node.older = newest
        node.newer = nil
        if let newest { newest.newer = node } else { oldest = node }
        newest = node
    }
}

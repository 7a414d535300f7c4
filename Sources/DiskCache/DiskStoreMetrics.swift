public import Primitives

/// A disk store's counters at one moment: a plain value.
public struct DiskStoreMetrics: Sendable, Equatable {
    public var budgetBytes = 0
    public var entries = 0
    /// What the entries cost (header + body, each rounded up to the filesystem block) plus the
    /// room reserved by writes in progress: never more than `budgetBytes`.
    public var bytes = 0
    public var hits = 0
    /// Lookups that found nothing, including the corrupt files dropped.
    public var misses = 0
    /// Entries written (`put` and `update`).
    public var writes = 0
    /// Writes that failed (each also leaves a log-worthy `lastWriteError`).
    public var writeFailures = 0
    /// Files found cut short, empty, with a bad header or a bad checksum, and deleted.
    public var corruptDropped = 0
    /// Entries removed to make room (least recently used first).
    public var evictions = 0
    /// Entries removed by `remove` and `removeAll(sourceKey:)`.
    public var removals = 0
    /// Puts refused before any write: over a size bound, busy, or while writes are stopped.
    public var rejected = 0
    /// Writes are stopped after a disk fault (`lastWriteError`) until the retry interval passes
    /// and a write succeeds again.
    public var writesDisabled = false
    public var lastWriteError: SystemError?

    public init() {}
}

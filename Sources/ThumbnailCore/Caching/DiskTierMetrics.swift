public import DiskCache

/// The disk tier's counters at one moment: the store's, and the tier's own.
public struct DiskTierMetrics: Sendable, Equatable {
    public var store = DiskStoreMetrics()
    /// Answers made from disk entries (each a memory miss the origin did not have to serve).
    public var served = 0
    /// Entries read back whole that could not be used (unreadable metadata, or another version
    /// of their source already in memory): removed.
    public var unusable = 0
    /// Memory misses that skipped the disk because every reader was busy and the read queue full.
    public var readQueueFull = 0
    /// Writes dropped because the write queue was full (those entries stay in memory only).
    public var writesDropped = 0
    /// Writes waiting for the writer thread now, and the bytes they hold.
    public var writeQueue = 0
    public var writeQueueBytes = 0

    public init() {}
}

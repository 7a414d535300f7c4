internal import Glibc

/// How a ``DiskStore`` bounds itself and reacts to faults. Every field has its default here.
public struct DiskStoreOptions: Sendable {
    /// At most this many entries. nil (the default): no bound but the budget's, which already
    /// bounds the count, since every entry is charged at least one filesystem block (4 KiB: a
    /// 1 GiB budget holds at most 262,144 entries, and the index keeps about 300 bytes of memory
    /// for each, measured). Set it to bound the index's memory more tightly.
    public var maxEntries: Int?
    /// The largest entry stored, header and body rounded up to the block size. nil (the
    /// default): an eighth of the budget, as the memory cache does, so that one huge file cannot
    /// flush everything else.
    public var maxEntryBytes: Int?
    /// After a write failed with a disk fault (`ENOSPC`, `EDQUOT`, `EIO`, `EROFS`, `EFBIG`),
    /// writes stop for this long; the first `put` after it tries again, and a success resumes
    /// them. Default 60 s: long enough not to hammer a sick disk, short enough that space freed
    /// by an operator is used again soon.
    public var writeRetryInterval: Duration = .seconds(60)
    /// A hit refreshes its file's modification time (the recency a restart reads back) at most
    /// this often per entry, as memcached bumps an item at most once a minute. Default 60 s.
    public var touchInterval: Duration = .seconds(60)
    /// `fsync` each file before renaming it into place. Off by default: a crash of the process
    /// loses nothing (the page cache has the bytes), and after a power loss a file the disk did
    /// not get whole fails its length or checksum and is dropped, never served; syncing would only
    /// save some entries a power loss would otherwise cost, for a disk write per entry.
    public var syncEachWrite = false

    /// The clocks (tests replace them).
    var clock = DiskClock.system
    /// Failures and pauses injected by tests.
    var faults = DiskFaults()

    public init(maxEntries: Int? = nil, maxEntryBytes: Int? = nil) {
        self.maxEntries = maxEntries
        self.maxEntryBytes = maxEntryBytes
    }
}

/// The store's two clocks: monotonic for intervals (write retries, touch rate), wall-clock for
/// what outlives the process (modification times, `storedAt`).
struct DiskClock: Sendable {
    var monotonic: @Sendable () -> ContinuousClock.Instant
    /// Nanoseconds since 1970 UTC.
    var wallNanoseconds: @Sendable () -> Int64

    static let system = DiskClock(
        monotonic: { .now },
        wallNanoseconds: {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
        })
}

/// A test's seams into the write path, for the faults a real folder cannot be made to produce on
/// demand (`EIO`, `EDQUOT`) and for a race that needs a gate.
struct DiskFaults: Sendable {
    /// Asked before each write to a file; an `errno` fails the write with it.
    var writeError: (@Sendable () -> Int32?)?
    /// Runs after a file is written, before it is renamed into place.
    var beforeRename: (@Sendable () -> Void)?
}

public import Primitives

/// An entry read back whole: checked (length, header and body checksums) before it is returned.
public struct DiskEntry: Sendable {
    public let key: String
    public let sourceKey: String
    public let meta: EntryMeta
    /// When `put` wrote it: wall-clock seconds since 1970 UTC (an update keeps it).
    public let storedAt: Int64
    public let body: DiskBody

    /// An entry read whole into `storage` (from `allocate`, taken over), its body after the
    /// header's `headerBytes`.
    init(_ header: EntryHeader, storage: UnsafeMutableRawPointer, headerBytes: Int) {
        key = header.key
        sourceKey = header.sourceKey
        meta = header.meta
        storedAt = header.storedAt
        body = DiskBody(storage: storage, offset: headerBytes, count: header.bodyBytes)
    }
}

/// An entry's body in memory, read from its file: one allocation holding the whole file, freed
/// when the last reference goes. Immutable after the read, hence `Sendable`; a host wraps it
/// without copying (`ImageBytes(base: body.base, count: body.count, owner: body)`).
public final class DiskBody: @unchecked Sendable {
    private let storage: UnsafeMutableRawPointer
    public let base: UnsafeRawPointer
    public let count: Int

    /// Takes over `storage` (from `allocate`), the body being `count` bytes at `offset`.
    init(storage: UnsafeMutableRawPointer, offset: Int, count: Int) {
        self.storage = storage
        self.base = UnsafeRawPointer(storage + offset)
        self.count = count
    }

    deinit { storage.deallocate() }

    /// The bytes, valid for the call.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        defer { withExtendedLifetime(self) {} }
        return try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy, for tests and small bodies.
    public var array: [UInt8] { withUnsafeBytes { [UInt8]($0) } }
}

/// An entry's body as a range of an open file, for a host that sends it with `sendfile` instead of
/// reading it into memory. The header and length are checked when it is opened; the body's
/// checksum is checked the first time this process opens the entry (it is read through once),
/// and an entry this process wrote counts as checked.
public struct DiskEntryFile: Sendable {
    public let key: String
    public let sourceKey: String
    public let meta: EntryMeta
    public let storedAt: Int64
    /// Open for reading; the body stays readable through it even if the entry is removed or
    /// replaced meanwhile.
    public let file: FileDescriptor
    public let bodyOffset: Int
    public let bodyCount: Int
}

/// What a `removeAll(sourceKey:)` took away.
public struct DiskRemoval: Sendable, Equatable {
    public var entries = 0
    /// Their cost (see `DiskStoreMetrics.bytes`).
    public var bytes = 0

    public init(entries: Int = 0, bytes: Int = 0) {
        self.entries = entries
        self.bytes = bytes
    }
}

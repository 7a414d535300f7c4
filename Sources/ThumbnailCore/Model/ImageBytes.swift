/// Immutable bytes owned by whoever produced them (a libcurl body, a libvips output buffer), shared
/// without copying between the cache, the workers and the HTTP server. `owner` keeps the memory
/// alive; the bytes are never written after construction, which is why this is `Sendable`.
public final class ImageBytes: @unchecked Sendable {
    public let base: UnsafeRawPointer?
    public let count: Int
    /// Whatever keeps the memory alive (a libcurl body, a libvips buffer); only held, never read.
    public let owner: AnyObject?

    /// Wraps memory that `owner` keeps alive.
    public init(base: UnsafeRawPointer?, count: Int, owner: AnyObject?) {
        self.base = base
        self.count = count
        self.owner = owner
    }

    /// Copies an array (tests and small bodies).
    public convenience init(_ bytes: [UInt8]) {
        let storage = ByteStorage(bytes)
        self.init(base: UnsafeRawPointer(storage.pointer), count: bytes.count, owner: storage)
    }

    public var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// The bytes, valid for the call: this object (and so its owner) is kept alive meanwhile.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        defer { withExtendedLifetime(self) {} }
        return try body(buffer)
    }

    public var array: [UInt8] { [UInt8](buffer) }
}

/// Heap memory for `ImageBytes(_:)`.
private final class ByteStorage {
    let pointer: UnsafeMutablePointer<UInt8>

    init(_ bytes: [UInt8]) {
        pointer = .allocate(capacity: max(bytes.count, 1))
        pointer.initialize(from: bytes, count: bytes.count)
    }

    deinit { pointer.deallocate() }
}

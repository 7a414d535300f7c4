internal import CVips
internal import CVipsShims

/// Encoded output owned by this object: libvips `g_malloc`ed it, `deinit` `g_free`s it. Hand the
/// object on instead of copying the bytes; it is immutable, hence safe to share across threads.
public final class VipsBuffer: @unchecked Sendable {
    /// The first byte. Valid for the object's lifetime.
    public let pointer: UnsafeRawPointer
    /// Number of bytes.
    public let count: Int

    /// Takes ownership of a `g_malloc`ed block.
    init(taking pointer: UnsafeRawPointer, count: Int) {
        self.pointer = pointer
        self.count = count
    }

    deinit {
        g_free(UnsafeMutableRawPointer(mutating: pointer))
    }

    /// Calls `body` with the bytes; they must not escape it.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// What malloc set aside for the block: `count` and malloc's rounding, once `encode` has
    /// shrunk it to fit (tests check that it did).
    package var allocatedBytes: Int { Int(cvips_allocated_size(pointer)) }

    /// A copy of the bytes (for tests and small outputs).
    public var bytes: [UInt8] {
        withUnsafeBytes { Array($0) }
    }
}

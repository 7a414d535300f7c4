#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A received body in one malloc'd block, freed in `deinit`. The block grows geometrically
/// while the body arrives but never beyond the transfer's byte cap. Immutable once the
/// transfer has completed, which is what makes sharing it across threads safe.
public final class CurlBody: @unchecked Sendable {
    /// Start of the bytes; `nil` when the body is empty.
    public private(set) var pointer: UnsafeRawPointer?
    public private(set) var count: Int
    private var capacity: Int

    /// An empty body.
    public init() {
        pointer = nil
        count = 0
        capacity = 0
    }

    deinit {
        free(UnsafeMutableRawPointer(mutating: pointer))
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Reserves room for `expected` bytes up front (a declared Content-Length), capped at `limit`.
    func reserve(_ expected: Int, limit: Int) {
        let wanted = min(expected, limit)
        if wanted > capacity { _ = grow(to: wanted) }
    }

    /// Appends `length` bytes unless the total would pass `limit`; `false` then, or when out of memory.
    func append(_ bytes: UnsafeRawPointer?, _ length: Int, limit: Int) -> Bool {
        guard length > 0 else { return true }
        guard let bytes, length <= limit - count else { return false }
        if count + length > capacity {
            // Double, so a body of n bytes costs O(log n) reallocations, but never past the cap.
            let doubled = capacity > limit / 2 ? limit : max(capacity * 2, 16 * 1024)
            guard grow(to: min(max(doubled, count + length), limit)) else { return false }
        }
        (UnsafeMutableRawPointer(mutating: pointer!) + count).copyMemory(from: bytes, byteCount: length)
        count += length
        return true
    }

    /// Gives back the unused tail of a block that grew by doubling (a chunked body), so a cached
    /// body's memory is what its `count` says.
    func shrinkToFit() {
        // count > 0: realloc(p, 0) frees p and returns NULL, which would leave `pointer` dangling.
        guard let pointer, count > 0, capacity - count > 4096 else { return }
        if let block = realloc(UnsafeMutableRawPointer(mutating: pointer), count) {
            self.pointer = UnsafeRawPointer(block)
            capacity = count
        }
    }

    private func grow(to newCapacity: Int) -> Bool {
        guard let block = realloc(UnsafeMutableRawPointer(mutating: pointer), newCapacity) else { return false }
        pointer = UnsafeRawPointer(block)
        capacity = newCapacity
        return true
    }
}

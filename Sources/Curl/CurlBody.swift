#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A received body in one block, freed in `deinit`. The block grows geometrically while the body
/// arrives but never beyond the transfer's byte cap. Immutable once the transfer has completed,
/// which is what makes sharing it across threads safe.
///
/// A body of `pagesFrom` bytes or more lives in pages of its own (`mmap`), not in malloc's heaps:
/// a fetched original is kept in the cache for as long as it is used and then evicted, and an
/// evicted original in a heap leaves a hole that only same-sized blocks can reuse — with cache
/// churn the heaps fill with such holes and RSS climbs past what the cache counts. Its own pages
/// go back to the system the moment it is freed, whatever malloc's mmap threshold is, so that
/// threshold can be set for libvips' working buffers alone (which are worth keeping in the heap).
/// Smaller bodies stay in malloc: each mapping counts against `vm.max_map_count` (65 530 by
/// default), and a cache of small originals would run out of them.
public final class CurlBody: @unchecked Sendable {
    /// Start of the bytes; `nil` when the body is empty.
    public private(set) var pointer: UnsafeRawPointer?
    public private(set) var count: Int
    private var capacity: Int
    /// Whether `pointer` is a mapping of `capacity` bytes (else a malloc'd block).
    private var mapped = false

    /// Bodies at least this large get pages of their own.
    static let pagesFrom = 256 << 10
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// An empty body.
    public init() {
        pointer = nil
        count = 0
        capacity = 0
    }

    deinit {
        Self.release(pointer, capacity: capacity, mapped: mapped)
    }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    /// Whether the bytes are in pages of their own (tests).
    var isMapped: Bool { mapped }

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
    /// body's memory is what its `count` says (to the page, for a mapped one).
    func shrinkToFit() {
        guard let pointer, count > 0, capacity - count > 4096 else { return }
        if mapped {
            let kept = Self.pages(count)
            guard kept < capacity else { return }
            // Unmapping the tail of a mapping is allowed and leaves the head where it is.
            if munmap(UnsafeMutableRawPointer(mutating: pointer) + kept, capacity - kept) == 0 { capacity = kept }
        } else if let block = realloc(UnsafeMutableRawPointer(mutating: pointer), count) {
            // count > 0: realloc(p, 0) frees p and returns NULL, which would leave `pointer` dangling.
            self.pointer = UnsafeRawPointer(block)
            capacity = count
        }
    }

    private func grow(to newCapacity: Int) -> Bool {
        if newCapacity < Self.pagesFrom {
            precondition(!mapped, "a mapped body never shrinks below pagesFrom by growing")
            guard let block = realloc(UnsafeMutableRawPointer(mutating: pointer), newCapacity) else { return false }
            pointer = UnsafeRawPointer(block)
            capacity = newCapacity
            return true
        }
        // A new mapping and one copy: with a declared Content-Length (the common case) the body
        // is reserved once and nothing is copied; a chunked body doubles, so copies stay O(n).
        let size = Self.pages(newCapacity)
        let block = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let block, block != MAP_FAILED else { return false }
        if let pointer, count > 0 { block.copyMemory(from: pointer, byteCount: count) }
        Self.release(pointer, capacity: capacity, mapped: mapped)
        pointer = UnsafeRawPointer(block)
        capacity = size
        mapped = true
        return true
    }

    private static func pages(_ bytes: Int) -> Int {
        (bytes + pageSize - 1) / pageSize * pageSize
    }

    private static func release(_ pointer: UnsafeRawPointer?, capacity: Int, mapped: Bool) {
        guard let pointer else { return }
        if mapped {
            munmap(UnsafeMutableRawPointer(mutating: pointer), capacity)
        } else {
            free(UnsafeMutableRawPointer(mutating: pointer))
        }
    }
}

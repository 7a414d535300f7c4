internal import Synchronization

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Page mappings of freed bodies, kept a short while for the next body instead of being unmapped.
///
/// Why: a fresh anonymous mapping costs a page fault and a page clearing by the kernel for every
/// 4 KiB the body's bytes land in — about 2 ms for an average 2.7 MB source on the bench host,
/// the largest part of what a cold miss spends in the kernel beyond the libvips floor
/// (docs/performance-history.md, 4 Dec). With the cache full, every new original evicts an old
/// one, so a mapping whose pages are already resident is freed just before the next fetch needs
/// one; handing it over saves the faults and the clearing.
///
/// Bounded two ways, so it never holds memory the cache or the work budget does not see for long:
/// at most `capacityBytes` and `maxMappings` idle, and `releaseIdle()` (called by the service's
/// trim thread once a second) unmaps every mapping that has sat unused since the previous call.
/// A taken mapping still holds the bytes of the body it last carried; a body only ever reads
/// the `count` bytes it wrote itself, so nothing of one source can reach another's reader.
final class PageMappingPool: Sendable {
    /// The pool the bodies use.
    static let shared = PageMappingPool(capacityBytes: 16 << 20, maxMappings: 4)

    private struct Mapping {
        /// The address as an integer: a raw pointer is not `Sendable`, and the pool only hands
        /// it back, never dereferences it.
        var address: UInt
        var size: Int
        /// Whether a `releaseIdle()` has passed since the mapping was given back.
        var seenByRelease = false
    }

    private struct State {
        var idle: [Mapping] = []
        var idleBytes = 0
    }

    let capacityBytes: Int
    let maxMappings: Int
    private let state = Mutex(State())

    init(capacityBytes: Int, maxMappings: Int) {
        self.capacityBytes = capacityBytes
        self.maxMappings = maxMappings
    }

    /// Bytes idle in the pool (tests).
    var idleBytes: Int { state.withLock { $0.idleBytes } }

    /// A mapping of exactly `size` bytes (a whole number of pages), recycled when one at least as
    /// large is idle (its tail beyond `size` is unmapped), else a new one; nil when out of memory.
    func take(size: Int) -> UnsafeMutableRawPointer? {
        let recycled: Mapping? = state.withLock { state in
            // The smallest that fits: the least is unmapped, the most stays for larger bodies.
            var best: Int?
            for (index, mapping) in state.idle.enumerated() where mapping.size >= size {
                if best.map({ mapping.size < state.idle[$0].size }) ?? true { best = index }
            }
            guard let best else { return nil }
            let mapping = state.idle.remove(at: best)
            state.idleBytes -= mapping.size
            return mapping
        }
        if let recycled, let base = UnsafeMutableRawPointer(bitPattern: recycled.address) {
            // Unmapping the tail of a mapping leaves the head where it is.
            if recycled.size > size { munmap(base + size, recycled.size - size) }
            return base
        }
        let block = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let block, block != MAP_FAILED else { return nil }
        return block
    }

    /// Takes back a mapping of `size` bytes from `take(size:)`: kept if it fits under the bounds,
    /// else unmapped (the oldest idle ones go first to make room for it).
    func give(_ base: UnsafeMutableRawPointer, size: Int) {
        var unmap: [Mapping] = []
        state.withLock { state in
            guard size <= capacityBytes, maxMappings > 0 else {
                unmap.append(Mapping(address: UInt(bitPattern: base), size: size))
                return
            }
            while state.idleBytes + size > capacityBytes || state.idle.count >= maxMappings {
                let oldest = state.idle.removeFirst()
                state.idleBytes -= oldest.size
                unmap.append(oldest)
            }
            state.idle.append(Mapping(address: UInt(bitPattern: base), size: size))
            state.idleBytes += size
        }
        // Outside the lock: munmap of a large mapping takes a while.
        Self.unmap(unmap)
    }

    /// Unmaps every mapping that was idle already at the previous call; the others are marked so
    /// the next call unmaps them unless a body takes them first.
    func releaseIdle() {
        let unmap: [Mapping] = state.withLock { state in
            let stale = state.idle.filter(\.seenByRelease)
            state.idle.removeAll(where: \.seenByRelease)
            for index in state.idle.indices { state.idle[index].seenByRelease = true }
            state.idleBytes = state.idle.reduce(0) { $0 + $1.size }
            return stale
        }
        Self.unmap(unmap)
    }

    private static func unmap(_ mappings: [Mapping]) {
        for mapping in mappings {
            if let base = UnsafeMutableRawPointer(bitPattern: mapping.address) { munmap(base, mapping.size) }
        }
    }
}

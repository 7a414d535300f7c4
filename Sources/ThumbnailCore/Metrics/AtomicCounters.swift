import Synchronization

/// A fixed block of `Int` counters, each updated with one relaxed atomic add: no lock and no
/// allocation after `init`, so the hit path can count. `Atomic` cannot be copied, so it cannot be
/// an `Array` element; the block is allocated once and indexed instead. Readers see each counter
/// on its own (a scrape is not a consistent cut across counters; Prometheus expects no more).
public final class AtomicCounters: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Atomic<Int>>
    public let count: Int

    public init(count: Int) {
        self.count = max(1, count)
        base = .allocate(capacity: self.count)
        for index in 0..<self.count { (base + index).initialize(to: Atomic(0)) }
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inlinable
    public func add(_ index: Int, _ amount: Int = 1) {
        precondition(index >= 0 && index < count, "counter index out of range")
        base[index].add(amount, ordering: .relaxed)
    }

    public subscript(index: Int) -> Int {
        precondition(index >= 0 && index < count, "counter index out of range")
        return base[index].load(ordering: .relaxed)
    }
}

internal import Primitives

/// Releases all `count` waiting threads at once.
final class ThreadBarrier: Sendable {
    private let arrived = Monitor(0)
    private let count: Int

    init(count: Int) { self.count = count }

    func wait() {
        arrived.withLock { $0 += 1 }
        arrived.wait(until: { $0 >= count })
    }
}

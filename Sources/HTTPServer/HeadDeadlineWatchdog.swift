internal import Primitives

/// A thread that, once per tick, shuts down connections that have not delivered a complete request
/// head within the deadline. libmicrohttpd's own timeout is an inactivity timer that every received
/// byte resets, so a client trickling header bytes would otherwise hold a connection forever.
final class HeadDeadlineWatchdog: Sendable {
    private let registry: ConnectionRegistry
    private let timeout: Int64
    private let tick: Duration
    /// Set by ``stop()``; the thread waits on it between ticks, so a stop ends the wait at once.
    private let stopped = Monitor(false)

    init(registry: ConnectionRegistry, timeout: Duration) {
        self.registry = registry
        self.timeout = timeout.nanoseconds
        // One second, or less for short deadlines (tests).
        self.tick = min(.seconds(1), max(timeout / 2, .milliseconds(10)))
    }

    func start() throws(SystemError) {
        try DetachedThread.start(name: "http-deadline", stackSize: 128 << 10) { self.run() }
    }

    /// The thread ends at once; it touches nothing but the registry meanwhile.
    func stop() {
        stopped.withLock { $0 = true }
    }

    private func run() {
        while !stopped.wait(until: { $0 }, timeout: tick) {
            registry.expire(waitingBefore: monotonicNanoseconds() - timeout)
        }
    }
}

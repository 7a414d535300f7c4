import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A thread that, once per tick, shuts down connections that have not delivered a complete request
/// head within the deadline. libmicrohttpd's own timeout is an inactivity timer that every received
/// byte resets, so a client trickling header bytes would otherwise hold a connection forever.
final class HeadDeadlineWatchdog: Sendable {
    private let registry: ConnectionRegistry
    private let timeout: Int64
    private let tick: Int64
    private let stopped = Atomic<Bool>(false)

    init(registry: ConnectionRegistry, timeout: Duration) {
        self.registry = registry
        self.timeout = timeout.nanoseconds
        // One second, or less for short deadlines (tests).
        self.tick = min(1_000_000_000, max(self.timeout / 2, 10_000_000))
    }

    func start() {
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                let watchdog = Unmanaged<HeadDeadlineWatchdog>.fromOpaque(argument!).takeRetainedValue()
                watchdog.run()
                return nil
            }, box)
        if result == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<HeadDeadlineWatchdog>.fromOpaque(box).release()
        }
    }

    /// The thread ends within one tick; it touches nothing but the registry meanwhile.
    func stop() {
        stopped.store(true, ordering: .relaxed)
    }

    private func run() {
        while !stopped.load(ordering: .relaxed) {
            var pause = timespec(tv_sec: Int(tick / 1_000_000_000), tv_nsec: Int(tick % 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&pause, &remaining) != 0 && errno == EINTR { pause = remaining }
            if stopped.load(ordering: .relaxed) { break }
            registry.expire(waitingBefore: monotonicNanoseconds() - timeout)
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}

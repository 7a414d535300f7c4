internal import Glibc

/// A value behind a lock: the lock for shared state everywhere in thumbd.
///
/// Why not `Synchronization.Mutex`: on Linux it is a futex inside the uninstrumented
/// libswiftSynchronization, so ThreadSanitizer cannot see it — every access made under it, and
/// every object handed from one thread to another through it (a transfer queued for curl's I/O
/// thread, a connection for a polling thread), looked like a race, and the suppressions that hid
/// them hid real races in the same code too. A pthread mutex is what TSan intercepts; uncontended
/// it costs the same (one atomic exchange to lock, one to unlock). Nobody waits on this lock for a
/// condition: that is ``Monitor``.
public final class Locked<State: ~Copyable>: @unchecked Sendable {
    // Heap-allocated: a pthread mutex must not move, and Swift may move a stored struct.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    /// `State` must have a size: with a `Void` state (a lock that guards no value), ThreadSanitizer
    /// reported the exclusivity accesses of two threads each inside `withLock` as a race.
    public init(_ state: consuming State) {
        precondition(MemoryLayout<State>.size > 0, "Locked needs a state with a size (not Void)")
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Reads or changes the state under the lock. Keep `body` short and never block in it.
    @inline(__always)
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

internal import Glibc

/// A value behind a lock, for threads that must *block* until the value says they may go on:
/// "the loop has ended", "every connection thread is gone", "the test opened the gate".
///
/// Why this and `Synchronization.Mutex` both: `Mutex` is the lock for state (nobody sleeps on
/// it); it has no way to wait for a condition. This pairs a pthread mutex with a condition
/// variable, replacing `NSCondition`, which brings Foundation and leaves the lock/unlock/while
/// protocol to every caller. Every ``withLock(_:)`` wakes all waiters, who re-check their
/// condition, so no caller can forget to signal. Timed waits use `CLOCK_MONOTONIC`, so changing
/// the wall clock never shortens or stretches them.
public final class Monitor<State>: @unchecked Sendable {
    // Heap-allocated: pthread objects must not move, and Swift may move a stored struct.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Reads or changes the state under the lock, then wakes every waiting thread.
    @discardableResult
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(condition)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Blocks until `condition` holds.
    public func wait(until condition: (State) -> Bool) {
        wait(until: condition) { _ in }
    }

    /// Blocks until `condition` holds, then runs `body` under the same lock hold (so nothing can
    /// change the state in between) and returns its result.
    public func wait<Result>(until condition: (State) -> Bool, then body: (inout State) throws -> Result) rethrows
        -> Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !condition(state) { pthread_cond_wait(self.condition, mutex) }
        return try body(&state)
    }

    /// Blocks until `condition` holds or `timeout` has passed; whether it holds.
    @discardableResult
    public func wait(until condition: (State) -> Bool, timeout: Duration) -> Bool {
        wait(until: condition, timeout: timeout) { _ in } != nil
    }

    /// As ``wait(until:then:)``, giving up after `timeout`: nil then, and `body` is not run.
    public func wait<Result>(
        until condition: (State) -> Bool, timeout: Duration, then body: (inout State) throws -> Result
    ) rethrows -> Result? {
        // The one reading of a clock other than `ContinuousClock` (CLOCK_BOOTTIME on Linux):
        // pthread_cond_timedwait wants an absolute time on the condition's clock, and glibc
        // accepts only CLOCK_REALTIME and CLOCK_MONOTONIC for a condition variable.
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = Duration(now) + max(timeout, .zero)
        var absolute = deadline.timespec
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !condition(state) {
            if pthread_cond_timedwait(self.condition, mutex, &absolute) == ETIMEDOUT, !condition(state) {
                return nil
            }
        }
        return try body(&state)
    }
}

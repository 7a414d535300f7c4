import Synchronization

/// One in-flight job per key; later callers for the same key wait on it instead of starting
/// their own. The job is started by the first caller (`join` returns true) and finished with
/// `complete`, which hands the one result to every waiter. Waiters are called outside the lock.
final class Flights<Value: Sendable>: Sendable {
    typealias Waiter = @Sendable (Result<Value, ThumbnailError>) -> Void

    private let waiters = Mutex<[CacheKey: [Waiter]]>([:])

    /// Adds `waiter` for `key`. Returns true when no job was in flight: the caller must start it.
    func join(_ key: CacheKey, _ waiter: @escaping Waiter) -> Bool {
        waiters.withLock { table in
            if table[key] != nil {
                table[key]!.append(waiter)
                return false
            }
            table[key] = [waiter]
            return true
        }
    }

    /// Ends the job for `key` and delivers `result` to everyone who joined it.
    func complete(_ key: CacheKey, with result: Result<Value, ThumbnailError>) {
        let toCall = waiters.withLock { $0.removeValue(forKey: key) } ?? []
        for waiter in toCall { waiter(result) }
    }
}

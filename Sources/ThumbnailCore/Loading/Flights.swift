import Synchronization

/// One in-flight job per key; later callers for the same key wait on it instead of starting
/// their own. The job is started by the first caller (`join` returns true) and finished with
/// `complete`, which hands the one result to every waiter. Waiters are called outside the lock.
///
/// The pipeline keeps three: variants, source fetches and revalidations (one conditional fetch
/// per source at a time).
///
/// A purge marks the flights of a source stale (`markStale`): their results still reach their
/// waiters, but `storeUnlessStale` no longer keeps them, so work that began before a purge cannot
/// put the purged content back. Storing runs under this lock, and a purge removes from the cache
/// under it too, so the two cannot interleave.
final class Flights<Value: Sendable>: Sendable {
    typealias Waiter = @Sendable (Result<Value, ThumbnailError>) -> Void

    private struct Flight {
        var waiters: [Waiter]
        var stale = false
    }

    private let flights = Mutex<[CacheKey: Flight]>([:])

    /// Adds `waiter` for `key`. Returns true when no job was in flight: the caller must start it.
    func join(_ key: CacheKey, _ waiter: @escaping Waiter) -> Bool {
        flights.withLock { table in
            if table[key] != nil {
                table[key]!.waiters.append(waiter)
                return false
            }
            table[key] = Flight(waiters: [waiter])
            return true
        }
    }

    /// Whether a job for `key` is in flight now.
    func isInFlight(_ key: CacheKey) -> Bool { flights.withLock { $0[key] != nil } }

    /// Runs `store` unless the flight for `key` was marked stale since it started.
    func storeUnlessStale(_ key: CacheKey, _ store: () -> Void) {
        flights.withLock { table in
            if table[key]?.stale != true { store() }
        }
    }

    /// Marks every flight of `source` stale, then runs `body` under the same lock.
    func markStale<T>(source: SourceURL, then body: () -> T) -> T {
        flights.withLock { table in
            for key in table.keys where key.source == source { table[key]!.stale = true }
            return body()
        }
    }

    /// Ends the job for `key` and delivers `result` to everyone who joined it.
    func complete(_ key: CacheKey, with result: Result<Value, ThumbnailError>) {
        let toCall = flights.withLock { $0.removeValue(forKey: key) }?.waiters ?? []
        for waiter in toCall { waiter(result) }
    }
}

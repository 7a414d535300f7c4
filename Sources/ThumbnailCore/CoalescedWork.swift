internal import Primitives

/// Coalescing: one job in progress per key, however many callers ask for it. The first caller
/// for a key starts the job (`join` returns true) and ends it with `complete`, which hands the one
/// result to every caller that joined meanwhile; later callers only wait. Waiters are called
/// outside the lock. (Nuke calls this a task pool; some pipelines call it "in-flight requests".)
///
/// The pipeline keeps three: variants being made (`variantJobs`), originals being fetched
/// (`sourceFetches`) and revalidations (`revalidations`: one conditional fetch per source at a
/// time).
///
/// A purge marks the jobs of a source stale (`markStale`): their results still reach their
/// waiters, but `storeUnlessStale` no longer keeps them, so work that began before a purge cannot
/// put the purged content back. Storing runs under this lock, and a purge removes from the cache
/// under it too, so the two cannot interleave.
final class CoalescedWork<Value: Sendable>: Sendable {
    typealias Waiter = @Sendable (Result<Value, ThumbnailError>) -> Void

    /// One job in progress: who waits for it, and whether a purge made its result not to be kept.
    private struct Job {
        var waiters: [Waiter]
        var stale = false
    }

    private let jobs = Locked<[CacheKey: Job]>([:])

    /// Adds `waiter` for `key`. Returns true when no job was in progress: the caller must start it.
    func join(_ key: CacheKey, _ waiter: @escaping Waiter) -> Bool {
        jobs.withLock { table in
            if table[key] != nil {
                table[key]!.waiters.append(waiter)
                return false
            }
            table[key] = Job(waiters: [waiter])
            return true
        }
    }

    /// Whether a job for `key` is in progress now.
    func isInFlight(_ key: CacheKey) -> Bool { jobs.withLock { $0[key] != nil } }

    /// Runs `store` unless the job for `key` was marked stale since it started.
    func storeUnlessStale(_ key: CacheKey, _ store: () -> Void) {
        jobs.withLock { table in
            if table[key]?.stale != true { store() }
        }
    }

    /// Marks every job of `source` stale, then runs `body` under the same lock.
    func markStale<T>(source: SourceURL, then body: () -> T) -> T {
        jobs.withLock { table in
            for key in table.keys where key.source == source { table[key]!.stale = true }
            return body()
        }
    }

    /// Ends the job for `key` and delivers `result` to everyone who joined it.
    func complete(_ key: CacheKey, with result: Result<Value, ThumbnailError>) {
        let toCall = jobs.withLock { $0.removeValue(forKey: key) }?.waiters ?? []
        for waiter in toCall { waiter(result) }
    }
}

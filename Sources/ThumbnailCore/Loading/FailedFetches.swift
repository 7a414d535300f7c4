internal import Primitives

/// Negative caching: a source whose fetch failed at the origin (404/410, 5xx, a connection
/// failure, a deadline miss) is remembered for a while, so a hot URL that fails is not fetched
/// again on every request. Successes are never stored here. Bounded: past `capacity` entries the
/// expired ones go first, then the soonest to expire.
final class FailedFetches: Sendable {
    private let ttl: Duration
    private let capacity: Int
    private let now: @Sendable () -> ContinuousClock.Instant
    private let table = Locked<[SourceURL: (error: ThumbnailError, until: ContinuousClock.Instant)]>([:])

    init(ttl: Duration, capacity: Int = 4096, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.ttl = ttl
        self.capacity = capacity
        self.now = now
    }

    /// Which failures are the origin's, and so worth remembering.
    static func isRemembered(_ error: ThumbnailError) -> Bool {
        [.sourceNotFound, .originFailed, .originTimeout, .processingTimeout].contains(error.code)
    }

    /// The remembered failure of `source`, if it has not expired.
    func failure(of source: SourceURL) -> ThumbnailError? {
        guard ttl > .zero else { return nil }
        let now = now()
        return table.withLock { table in
            guard let entry = table[source] else { return nil }
            if entry.until <= now {
                table.removeValue(forKey: source)
                return nil
            }
            return entry.error
        }
    }

    func remember(_ error: ThumbnailError, of source: SourceURL) {
        guard ttl > .zero, Self.isRemembered(error) else { return }
        let now = now()
        table.withLock { table in
            if table.count >= capacity && table[source] == nil {
                table = table.filter { $0.value.until > now }
                if table.count >= capacity, let soonest = table.min(by: { $0.value.until < $1.value.until }) {
                    table.removeValue(forKey: soonest.key)
                }
            }
            table[source] = (error, now.advanced(by: ttl))
        }
    }

    /// A source fetched successfully (or purged) is not a failure any more.
    func forget(_ source: SourceURL) {
        _ = table.withLock { $0.removeValue(forKey: source) }
    }
}

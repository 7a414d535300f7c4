/// A value the cache can hold: it knows its own cost in bytes and its kind.
public protocol CacheCosted: Sendable {
    /// Payload bytes (the cache adds a fixed per-entry overhead).
    var payloadBytes: Int { get }
    /// Called once when the entry holding this value leaves the cache (evicted, removed, purged,
    /// replaced), under the cache's lock: setting a flag, nothing more. What the host serves from
    /// outside the cache (`PreparedForm`) learns here that it must not be served any longer.
    func leftCache()
}

extension CacheCosted {
    public func leftCache() {}
}

/// The memory cache the pipeline keeps originals, decoded copies and variants in. The default is
/// `ImageCache` (one budget, LRU by cost); tests may swap it.
public protocol ImageCaching<Value>: Sendable {
    associatedtype Value: CacheCosted

    /// The value, marked most recently used; counted as a hit or a miss of its kind.
    func value(forKey key: CacheKey) -> Value?
    /// Looks without counting or reordering.
    func peek(_ key: CacheKey) -> Value?
    /// Stores `value`, evicting to make room; false (nothing stored) when it alone is too large.
    @discardableResult func insert(_ value: Value, forKey key: CacheKey) -> Bool
    func removeValue(forKey key: CacheKey)
    /// Puts `value` in place of the entry under `key`, keeping its place in the recency order,
    /// when `isCurrent` accepts the entry there and the cost is the same; false otherwise.
    /// `isCurrent` runs under the cache's lock: a comparison, nothing more.
    @discardableResult func replaceValue(
        _ value: Value, forKey key: CacheKey, where isCurrent: (Value) -> Bool
    ) -> Bool
    /// Removes every entry of `source` (its original, decoded copy and all variants); returns
    /// how many and their cost.
    @discardableResult func removeAll(of source: SourceURL) -> CacheRemoval
    /// Counts a hit of `kind` served without `value(forKey:)` (from a reference the host kept,
    /// still in the cache): no lock, no reordering.
    func countHit(_ kind: CacheKind)
    /// The counters, by kind, and the budget.
    var metrics: CacheMetrics { get }
}

/// What a purge removed.
public struct CacheRemoval: Sendable, Equatable {
    public var entries = 0
    /// Resident cost freed (payload + per-entry overhead).
    public var bytes = 0

    public init(entries: Int = 0, bytes: Int = 0) {
        self.entries = entries
        self.bytes = bytes
    }
}

/// A cache's counters at one moment: a plain value.
public struct CacheMetrics: Sendable, Equatable {
    public struct Kind: Sendable, Equatable {
        /// Resident cost (payload + per-entry overhead).
        public var bytes = 0
        public var entries = 0
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        /// Inserts refused because the entry alone was over the per-entry limit.
        public var rejected = 0

        public init() {}
    }

    public var budget = 0
    /// One counter set per kind, indexed by the kind's position rather than hashed: a hit updates
    /// one under the cache's lock, and a dictionary there cost a hash lookup per hit.
    private var kinds = [Kind](repeating: Kind(), count: CacheKind.allCases.count)

    public init(budget: Int = 0) { self.budget = budget }

    public subscript(kind: CacheKind) -> Kind {
        get { kinds[kind.index] }
        set { kinds[kind.index] = newValue }
    }

    /// All kinds together.
    public var total: Kind {
        kinds.reduce(into: Kind()) { sum, kind in
            sum.bytes += kind.bytes
            sum.entries += kind.entries
            sum.hits += kind.hits
            sum.misses += kind.misses
            sum.evictions += kind.evictions
            sum.rejected += kind.rejected
        }
    }
}

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

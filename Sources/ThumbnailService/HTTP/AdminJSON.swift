import ThumbnailCore

/// The admin endpoints' JSON bodies.
enum AdminJSON {
    /// `{"removed":{"entries":N,"bytes":B}}`
    static func removal(_ removal: CacheRemoval) -> String {
        "{\"removed\":{\"entries\":\(removal.entries),\"bytes\":\(removal.bytes)}}"
    }

    /// The cache's counters: the totals, the budget, and each kind.
    static func stats(_ metrics: CacheMetrics) -> String {
        func object(_ kind: CacheMetrics.Kind) -> String {
            "{\"entries\":\(kind.entries),\"bytes\":\(kind.bytes),\"hits\":\(kind.hits),\"misses\":\(kind.misses),"
                + "\"evictions\":\(kind.evictions),\"rejected\":\(kind.rejected)}"
        }
        let kinds = CacheKind.allCases.map { "\"\($0.rawValue)\":\(object(metrics[$0]))" }.joined(separator: ",")
        return "{\"budget\":\(metrics.budget),\"total\":\(object(metrics.total)),\"kinds\":{\(kinds)}}"
    }
}

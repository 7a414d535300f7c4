import DiskCache
import ThumbnailCore

/// The admin endpoints' JSON bodies.
enum AdminJSON {
    /// `{"removed":{"entries":N,"bytes":B}}`, with `"disk":{"entries":N,"bytes":B}` when there is
    /// a disk tier (its bytes in filesystem blocks).
    static func removal(_ removal: CacheRemoval, disk: DiskRemoval? = nil) -> String {
        let memory = "\"removed\":{\"entries\":\(removal.entries),\"bytes\":\(removal.bytes)}"
        guard let disk else { return "{\(memory)}" }
        return "{\(memory),\"disk\":{\"entries\":\(disk.entries),\"bytes\":\(disk.bytes)}}"
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

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

    /// The cache's counters: the totals, the budget, and each kind; with a disk tier, its
    /// counters too (`disk`, the same figures as `/metrics`' `thumbd_disk_cache_*`).
    static func stats(_ metrics: CacheMetrics, disk: DiskTierMetrics? = nil) -> String {
        func object(_ kind: CacheMetrics.Kind) -> String {
            "{\"entries\":\(kind.entries),\"bytes\":\(kind.bytes),\"hits\":\(kind.hits),\"misses\":\(kind.misses),"
                + "\"evictions\":\(kind.evictions),\"rejected\":\(kind.rejected)}"
        }
        let kinds = CacheKind.allCases.map { "\"\($0.rawValue)\":\(object(metrics[$0]))" }.joined(separator: ",")
        let memory = "\"budget\":\(metrics.budget),\"total\":\(object(metrics.total)),\"kinds\":{\(kinds)}"
        guard let disk else { return "{\(memory)}" }
        return "{\(memory),\"disk\":\(diskObject(disk))}"
    }

    /// The disk tier's figures; `bytes` in filesystem blocks, as its budget counts them.
    private static func diskObject(_ disk: DiskTierMetrics) -> String {
        let store = disk.store
        let fields: [(String, String)] = [
            ("budget", "\(store.budgetBytes)"), ("entries", "\(store.entries)"), ("bytes", "\(store.bytes)"),
            ("served", "\(disk.served)"), ("hits", "\(store.hits)"), ("misses", "\(store.misses)"),
            ("writes", "\(store.writes)"), ("writeFailures", "\(store.writeFailures)"),
            ("writesDisabled", "\(store.writesDisabled)"), ("evictions", "\(store.evictions)"),
            ("removals", "\(store.removals)"), ("corruptDropped", "\(store.corruptDropped)"),
            ("unusable", "\(disk.unusable)"), ("rejected", "\(store.rejected)"),
            ("writeQueue", "\(disk.writeQueue)"), ("writesDropped", "\(disk.writesDropped)"),
            ("readQueueFull", "\(disk.readQueueFull)"),
        ]
        return "{" + fields.map { "\"\($0)\":\($1)" }.joined(separator: ",") + "}"
    }
}

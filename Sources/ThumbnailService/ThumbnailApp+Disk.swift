import DiskCache
internal import Primitives
import ThumbnailCore

extension ThumbnailApp {
    /// The disk tier of `--disk-cache-dir`, opened (indexed from the folder's names, no body read)
    /// before anything listens, so that `/readyz` turns 200 with it in place; nil without a folder.
    /// Throws `DiskStoreError` when the folder cannot be used (another thumbd holds it, it is not
    /// writable, …): a startup error, since an instance that silently ran without the tier would
    /// send every restart's misses to the origins again.
    static func openDiskTier(
        _ configuration: ServiceConfiguration, options: DiskStoreOptions, log: RequestLog
    ) throws -> DiskTier? {
        let settings = configuration.cache
        guard !settings.diskDirectory.isEmpty else { return nil }
        let started = ContinuousClock.now
        let store = try DiskStore(
            directory: settings.diskDirectory, budgetBytes: settings.diskBytes, options: options)
        let tier = try DiskTier(store: store) { event in
            switch event {
            case .writesStopped(let error):
                log.event(
                    LogEvent(
                        "disk-cache-writes-stopped",
                        "disk cache \(settings.diskDirectory): writes stopped (\(error)); serving from memory, disk and origins, retrying in 60 s",
                        [("dir", .text(settings.diskDirectory)), ("error", .text(error.description))]))
            case .writesResumed:
                log.event(
                    LogEvent(
                        "disk-cache-writes-resumed", "disk cache \(settings.diskDirectory): writes work again",
                        [("dir", .text(settings.diskDirectory))]))
            }
        }
        let metrics = store.metrics
        let elapsed = (ContinuousClock.now - started).seconds
        log.event(
            LogEvent(
                "disk-cache",
                "disk cache \(settings.diskDirectory): \(metrics.entries) entries, \(ByteCount.format(metrics.bytes)) of \(ByteCount.format(metrics.budgetBytes)), opened in \(Int(elapsed * 1000)) ms",
                [
                    ("dir", .text(settings.diskDirectory)), ("entries", .int(metrics.entries)),
                    ("bytes", .int(metrics.bytes)), ("budget", .int(metrics.budgetBytes)),
                    ("seconds", .number(elapsed)),
                ]))
        return tier
    }
}

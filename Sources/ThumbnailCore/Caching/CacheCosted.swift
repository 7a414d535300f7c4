/// A value the cache can hold: it knows its own cost in bytes and its kind.
public protocol CacheCosted: Sendable {
    /// Payload bytes (the cache adds a fixed per-entry overhead).
    var payloadBytes: Int { get }
    /// Called once when the entry holding this value leaves the cache (evicted, removed, purged,
    /// replaced), under the cache's lock: setting a flag, nothing more. What the host serves from
    /// outside the cache (`PreparedAnswer`) learns here that it must not be served any longer.
    func leftCache()
}

extension CacheCosted {
    public func leftCache() {}
}

/// What the host prepares from a stored variant to answer its hits with: made once, when the
/// variant is stored, and kept in its cache entry (the pipeline's `Prepared`; the service's is
/// `HitResponses`, its ready-made 200 and 304). Core never looks inside it. It says what it holds
/// in memory besides the variant's bytes, which it shares, so that the cache charges it: for small
/// thumbnails it is more than the bytes themselves, and a budget that left it out held several
/// times what it counted (measured against RSS).
public protocol PreparedAnswer: Sendable {
    /// Bytes held, allocator overhead included. The same for every preparation of one variant:
    /// a renewed promise replaces the entry in place, at the same cost.
    var residentBytes: Int { get }
    /// Its entry left the cache (see `CacheCosted.leftCache`): a flag, set under the cache's lock.
    func leftCache()
}

extension PreparedAnswer {
    public func leftCache() {}
}

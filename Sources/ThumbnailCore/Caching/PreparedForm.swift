/// What the host makes from a stored variant and keeps in its cache entry (`Prepared`; the
/// service's is its two ready-made hit responses). It says what it holds in memory besides the
/// variant's bytes, which it shares, so that the cache charges it: for small thumbnails it is
/// more than the bytes themselves, and a budget that left it out held several times what it
/// counted (`bench/entry-cost.sh`).
public protocol PreparedForm: Sendable {
    /// Bytes held, allocator overhead included. The same for every preparation of one variant:
    /// a renewed promise replaces the entry in place, at the same cost.
    var residentBytes: Int { get }
    /// Its entry left the cache (see `CacheCosted.leftCache`): a flag, set under the cache's lock.
    func leftCache()
}

extension PreparedForm {
    public func leftCache() {}
}

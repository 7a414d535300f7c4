/// The memory cache the pipeline keeps originals, decoded copies and variants in. The default is
/// `ImageCache` (one budget, LRU by cost); tests may swap it.
public protocol ImageCaching<Value>: Sendable {
    associatedtype Value: CacheCosted

    /// The value, marked most recently used; counted as a hit or a miss of its kind.
    func value(forKey key: CacheKey) -> Value?
    /// As `value(forKey:)`, but a miss is not counted: for a lookup that, when it misses, is
    /// followed by one that counts (the hit path, then the full path's lookup).
    func valueCountingHit(forKey key: CacheKey) -> Value?
    /// Counts a miss of `kind` that `valueCountingHit` left uncounted, when no lookup that counts
    /// follows it (the hit path answered the miss itself, from the disk tier).
    func countMiss(_ kind: CacheKind)
    /// Looks without counting or reordering.
    func peek(_ key: CacheKey) -> Value?
    /// Stores `value`, evicting to make room; false (nothing stored) when it alone is too large.
    @discardableResult func insert(_ value: Value, forKey key: CacheKey) -> Bool
    func removeValue(forKey key: CacheKey)
    /// Puts `value` in place of the entry under `key`, keeping its place in the recency order,
    /// when `isCurrent` accepts the entry there and the cost is the same (as stored, before any
    /// growth); false otherwise.
    /// `isCurrent` runs under the cache's lock: a comparison, nothing more.
    @discardableResult func replaceValue(
        _ value: Value, forKey key: CacheKey, where isCurrent: (Value) -> Bool
    ) -> Bool
    /// Charges `bytes` more to the entry under `key`, when `isCurrent` accepts its value: memory
    /// the value came to hold after it was stored (a host's prepared answer made a second form of
    /// itself on demand). Evicts least recent entries to stay within the budget, the grown one
    /// included; true when the entry is still cached after it. A replaced value's growth leaves
    /// with it. `isCurrent` runs under the cache's lock.
    @discardableResult func charge(_ bytes: Int, growthOf key: CacheKey, where isCurrent: (Value) -> Bool) -> Bool
    /// The first value of `source`'s entries (any kind, no order promised) that `pick` makes
    /// something of, without counting or reordering. `pick` runs under the cache's lock.
    func firstValue<T>(of source: SourceURL, _ pick: (Value) -> T?) -> T?
    /// Removes every entry of `source` (its original, decoded copy and all variants); returns
    /// how many and their cost.
    @discardableResult func removeAll(of source: SourceURL) -> CacheRemoval
    /// Counts a hit of `kind` served without `value(forKey:)` (from a reference the host kept,
    /// still in the cache): no lock, no reordering.
    func countHit(_ kind: CacheKind)
    /// The counters, by kind, and the budget.
    var metrics: CacheMetrics { get }
}

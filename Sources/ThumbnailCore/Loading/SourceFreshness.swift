internal import Primitives

/// How to ask an origin whether a source changed: the validators its last answer carried, as
/// opaque tokens (Core never parses them; the fetcher sends them back as they came).
public struct SourceValidators: Sendable, Equatable {
    /// The entity tag, quotes included (`"abc"`, `W/"abc"`).
    public var etag: String?
    /// The last-modified date as the origin wrote it.
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Nothing to revalidate with: a conditional request would be a plain one.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// The freshness of one fetched original, shared by reference with every decoded copy and variant
/// made from it: "a variant is fresh as long as its original is" holds by construction, and a
/// revalidation that hears "not modified" renews them all at once by moving `freshUntil`, without
/// touching (or even finding) the cache entries. A changed source gets a new instance.
///
/// `freshUntil` only ever moves later (a renewal happens when the source is stale, so its new
/// expiry is past the old one); the variants' prepared answers rely on that.
public final class SourceFreshness: Sendable {
    public let validators: SourceValidators
    /// False when the origin said `no-store`: used for the request that fetched it, never kept.
    public let isStorable: Bool
    private let until: Locked<ContinuousClock.Instant>

    public init(validators: SourceValidators, freshUntil: ContinuousClock.Instant, isStorable: Bool = true) {
        self.validators = validators
        self.isStorable = isStorable
        self.until = Locked(freshUntil)
    }

    public var freshUntil: ContinuousClock.Instant { until.withLock { $0 } }

    /// How long past its expiry the source is at `now` (zero or negative: still fresh).
    public func overdue(at now: ContinuousClock.Instant) -> Duration { now - freshUntil }

    public func isFresh(at now: ContinuousClock.Instant) -> Bool { now < freshUntil }

    /// A revalidation said "not modified": fresh until `instant` (never earlier than it was).
    func renew(until instant: ContinuousClock.Instant) {
        until.withLock { $0 = max($0, instant) }
    }
}

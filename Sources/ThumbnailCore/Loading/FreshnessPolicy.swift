/// How long cached originals stay fresh, and how long a stale one may still be served.
public struct FreshnessPolicy: Sendable, Equatable {
    /// The shortest lifetime an original gets, whatever its origin said (`max-age=0` included):
    /// a hot source is revalidated at most this often.
    public var minimum: Duration
    /// The longest lifetime, however long its origin allowed: a replaced image shows within this.
    public var maximum: Duration
    /// The lifetime when the origin said nothing.
    public var fallback: Duration
    /// A stale entry is answered at once, while one revalidation runs, for this long past its
    /// expiry; later requests wait for the revalidation.
    public var staleWhileRevalidate: Duration
    /// When revalidation fails (connection error, 5xx, deadline), the stale entry is answered
    /// instead of the error for this long past its expiry.
    public var staleIfError: Duration

    /// No defaults: the service's settings (`ServiceConfiguration.Freshness`) are where they are
    /// written.
    public init(
        minimum: Duration, maximum: Duration, fallback: Duration, staleWhileRevalidate: Duration,
        staleIfError: Duration
    ) {
        self.minimum = minimum
        self.maximum = maximum
        self.fallback = fallback
        self.staleWhileRevalidate = staleWhileRevalidate
        self.staleIfError = staleIfError
    }

    /// The lifetime of an answer: the origin's (or the fallback), clamped to `minimum...maximum`
    /// (when the two cross, `maximum` wins: it is the promise about how soon changes show).
    public func lifetime(_ directives: OriginDirectives) -> Duration {
        min(max(directives.lifetime ?? fallback, minimum), maximum)
    }

    /// A new freshness record for an answer received at `now`.
    func freshness(_ directives: OriginDirectives, at now: ContinuousClock.Instant) -> SourceFreshness {
        SourceFreshness(
            validators: directives.validators, freshUntil: now.advanced(by: lifetime(directives)),
            isStorable: !directives.noStore)
    }
}

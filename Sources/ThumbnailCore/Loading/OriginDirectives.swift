/// What an origin's answer said about keeping it, as the fetcher read it from the answer's headers
/// (the service parses them; Core only applies the `FreshnessPolicy`).
public struct OriginDirectives: Sendable, Equatable {
    /// The lifetime the origin gave (`s-maxage`, `max-age`, or `Expires` against `Date`); nil when
    /// it said nothing (the policy's default applies).
    public var lifetime: Duration?
    /// `no-store` (or `private`: we are a shared cache): use the answer, keep nothing of it.
    public var noStore: Bool
    public var validators: SourceValidators

    public init(lifetime: Duration? = nil, noStore: Bool = false, validators: SourceValidators = SourceValidators()) {
        self.lifetime = lifetime
        self.noStore = noStore
        self.validators = validators
    }
}

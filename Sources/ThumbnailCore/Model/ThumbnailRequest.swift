/// A validated `/thumb` (or `/prefetch`) request.
public struct ThumbnailRequest: Sendable, Equatable {
    public var source: SourceURL
    /// nil only for a prefetch of the original alone.
    public var spec: TransformSpec?
    /// True for `format=auto`: the host picks the format (from what the client accepts) with
    /// `choosingFormat(_:)` before the request is used, and says the answer varies.
    public var formatIsNegotiated: Bool
    /// A signed URL's `exp` (Unix seconds), if it has one; not part of any key.
    public var expires: Int?

    public init(source: SourceURL, spec: TransformSpec?, formatIsNegotiated: Bool = false, expires: Int? = nil) {
        self.source = source
        self.spec = spec
        self.formatIsNegotiated = formatIsNegotiated
        self.expires = expires
    }

    /// The request with its negotiated format settled.
    public func choosingFormat(_ format: RequestedFormat) -> ThumbnailRequest {
        var copy = self
        copy.spec?.format = format
        return copy
    }

    /// The cache key of the variant (nil without a spec).
    public var variantKey: CacheKey? { spec.map { .variant(source, $0) } }
}

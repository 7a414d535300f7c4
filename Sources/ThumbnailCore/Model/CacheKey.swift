/// What the one cache (and the coalescing of in-flight work) is keyed by. Originals, decoded copies
/// and variants share the cache; the case keeps them apart, and a variant's key holds every
/// output-affecting parameter of its spec (`TransformSpec` is `Hashable` over exactly those).
public enum CacheKey: Hashable, Sendable {
    /// A source as fetched.
    case original(SourceURL)
    /// A decoded, pre-shrunk copy of a source, for new sizes.
    case decoded(SourceURL)
    /// An encoded thumbnail of a source.
    case variant(SourceURL, TransformSpec)

    public var kind: CacheKind {
        switch self {
        case .original: .original
        case .decoded: .decoded
        case .variant: .variant
        }
    }

    public var source: SourceURL {
        switch self {
        case .original(let source), .decoded(let source), .variant(let source, _): source
        }
    }
}

/// The three kinds of cache entry, for per-kind accounting.
public enum CacheKind: String, Sendable, CaseIterable {
    case original, decoded, variant
}

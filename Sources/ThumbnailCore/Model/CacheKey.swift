/// What the one cache (and the coalescing of in-flight work) is keyed by. Originals, decoded copies,
/// variants and info documents share the cache; the kind keeps them apart, and a variant's key holds every
/// output-affecting parameter of its spec (`TransformSpec` is `Hashable` over exactly those).
///
/// A struct over one immutable box with the hash computed once: a key is looked up, copied and
/// compared on every cache hit, and a box is one retain to copy and one integer to hash, where the
/// fields themselves (three strings and a spec) would be several of each.
public struct CacheKey: Hashable, Sendable, CustomStringConvertible {
    private final class Box: Sendable {
        let kind: CacheKind
        let source: SourceURL
        let spec: TransformSpec?
        let hash: Int

        init(kind: CacheKind, source: SourceURL, spec: TransformSpec?) {
            self.kind = kind
            self.source = source
            self.spec = spec
            var hasher = Hasher()
            hasher.combine(kind)
            hasher.combine(source)
            hasher.combine(spec)
            self.hash = hasher.finalize()
        }
    }

    private let box: Box

    private init(_ kind: CacheKind, _ source: SourceURL, _ spec: TransformSpec?) {
        box = Box(kind: kind, source: source, spec: spec)
    }

    /// A source as fetched.
    public static func original(_ source: SourceURL) -> CacheKey { CacheKey(.original, source, nil) }
    /// A decoded, pre-shrunk copy of a source, for new sizes.
    public static func decoded(_ source: SourceURL) -> CacheKey { CacheKey(.decoded, source, nil) }
    /// An encoded thumbnail of a source.
    public static func variant(_ source: SourceURL, _ spec: TransformSpec) -> CacheKey {
        CacheKey(.variant, source, spec)
    }
    /// A source's info document (`/info`): one per source, made from its original like a variant.
    public static func info(_ source: SourceURL) -> CacheKey { CacheKey(.info, source, nil) }

    public var kind: CacheKind { box.kind }
    public var source: SourceURL { box.source }
    /// The variant's spec (nil for originals, decoded copies and info documents).
    public var spec: TransformSpec? { box.spec }

    public static func == (a: CacheKey, b: CacheKey) -> Bool {
        if a.box === b.box { return true }
        return a.box.hash == b.box.hash && a.box.kind == b.box.kind && a.box.spec == b.box.spec
            && a.box.source == b.box.source
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.hash) }

    public var description: String {
        "\(kind.rawValue) \(source)" + (spec.map { " \($0.canonical)" } ?? "")
    }
}

/// The kinds of cache entry, for per-kind accounting.
public enum CacheKind: String, Sendable, CaseIterable {
    case original, decoded, variant, info

    /// Position in `allCases`, for per-kind tables.
    var index: Int {
        switch self {
        case .original: 0
        case .decoded: 1
        case .variant: 2
        case .info: 3
        }
    }
}

/// How a thumbnail fills its box.
public enum Fit: String, Sendable, CaseIterable {
    /// Within w×h, aspect kept (the default).
    case inside
    /// Fills w×h, aspect kept, the overflow cropped.
    case cover
    /// Stretched to w×h.
    case fill
}

/// Which part `cover` keeps.
public enum Crop: String, Sendable, CaseIterable {
    case centre
    /// libvips' smart crop (the most "interesting" region).
    case attention
}

/// Everything that shapes the output, in canonical form.
public struct TransformSpec: Sendable, Equatable {
    public static let maxSide = 8192
    public static let defaultQuality = 80

    public var width: Int
    /// nil: only the width bounds the output (`inside`); cover and fill need both.
    public var height: Int?
    public var fit: Fit
    public var crop: Crop
    public var format: RequestedFormat
    public var quality: Int

    public init(
        width: Int, height: Int? = nil, fit: Fit = .inside, crop: Crop = .centre, format: RequestedFormat = .source,
        quality: Int = TransformSpec.defaultQuality
    ) {
        self.width = width
        self.height = height
        self.fit = fit
        self.crop = crop
        self.format = format
        self.quality = quality
    }

    /// Every output-affecting parameter, always in the same order and spelling.
    public var canonical: String {
        let crop = fit == .cover ? self.crop.rawValue : "-"
        return
            "w=\(width),h=\(height.map(String.init) ?? "-"),fit=\(fit.rawValue),crop=\(crop),fmt=\(format.canonical),q=\(quality)"
    }
}

/// A validated `/thumb` (or `/prefetch`) request.
public struct ThumbnailRequest: Sendable, Equatable {
    public var source: SourceURL
    /// nil only for a prefetch of the original alone.
    public var spec: TransformSpec?
    /// True when `format=auto`: the answer depends on `Accept` (and says `Vary: Accept`).
    public var variesOnAccept: Bool

    public init(source: SourceURL, spec: TransformSpec?, variesOnAccept: Bool = false) {
        self.source = source
        self.spec = spec
        self.variesOnAccept = variesOnAccept
    }

    /// The cache key of the original.
    public var sourceKey: String { CacheKey.original(source) }

    /// The cache key of the variant (nil without a spec).
    public var variantKey: String? { spec.map { CacheKey.variant(source, $0) } }
}

/// Composite cache keys. Originals and variants share one cache, so the prefixes keep them apart.
public enum CacheKey {
    public static func original(_ source: SourceURL) -> String { "o|\(source)" }
    public static func variant(_ source: SourceURL, _ spec: TransformSpec) -> String { "v|\(source)|\(spec.canonical)" }
    public static func decoded(_ source: SourceURL) -> String { "d|\(source)" }
}

/// Everything that shapes the output, in canonical form: two specs are equal (and share a cache
/// entry) exactly when they ask for the same output. Sizes are output pixels (`dpr` already
/// applied); `crop` is `.centre` unless `fit` is `.cover` (see `RequestParameter.Key`).
public struct TransformSpec: Sendable, Hashable {
    public static let maxSide = 8192
    public static let defaultQuality = 80

    public let width: Int
    /// nil: only the width bounds the output (`inside`); cover and fill need both.
    public let height: Int?
    public let fit: Fit
    public let crop: Crop
    public var format: RequestedFormat
    public let quality: Int

    /// `dpr` in tenths (10...40) multiplies `width` and `height`, rounded to whole pixels.
    public init(
        width: Int, height: Int? = nil, dprTenths: Int = 10, fit: Fit = .inside, crop: Crop = .centre,
        format: RequestedFormat = .source, quality: Int = TransformSpec.defaultQuality
    ) {
        self.width = Self.scaled(width, dprTenths)
        self.height = height.map { Self.scaled($0, dprTenths) }
        self.fit = fit
        self.crop = fit == .cover ? crop : .centre
        self.format = format
        self.quality = quality
    }

    private static func scaled(_ side: Int, _ tenths: Int) -> Int { max(1, (side * tenths + 5) / 10) }

    /// Every output-affecting parameter, always in the same order and spelling (for logs).
    public var canonical: String {
        let crop = fit == .cover ? self.crop.rawValue : "-"
        return
            "w=\(width),h=\(height.map(String.init) ?? "-"),fit=\(fit.rawValue),crop=\(crop),fmt=\(format.canonical),q=\(quality)"
    }
}

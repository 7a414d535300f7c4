/// What `Vips.thumbnail(of:options:)` produces. The output never exceeds the source's size after
/// EXIF orientation, whatever the box.
public struct VipsThumbnailOptions: Sendable {
    /// Box width in pixels, at least 1.
    public var width: Int
    /// Box height in pixels, at least 1. `nil`: unbounded for `.inside`, equal to `width` for
    /// `.cover` and `.fill`. Default `nil`.
    public var height: Int?
    /// How the box is filled. Default `.inside`.
    public var fit: VipsFit
    /// What `.cover` keeps. Default `.centre`.
    public var crop: VipsCrop
    /// The encoder. Default `.jpeg`.
    public var format: VipsOutputFormat
    /// Encoder quality 1...100 (ignored by PNG). Default 80.
    public var quality: Int
    /// When set, an image without alpha, or whose alpha is opaque everywhere, is encoded in this
    /// format instead of `format` (a GIF always loads with an alpha band, used or not). Default nil.
    public var opaqueFormat: VipsOutputFormat?

    public init(
        width: Int, height: Int? = nil, fit: VipsFit = .inside, crop: VipsCrop = .centre,
        format: VipsOutputFormat = .jpeg, quality: Int = 80, opaqueFormat: VipsOutputFormat? = nil
    ) {
        self.opaqueFormat = opaqueFormat
        self.width = width
        self.height = height
        self.fit = fit
        self.crop = crop
        self.format = format
        self.quality = quality
    }
}

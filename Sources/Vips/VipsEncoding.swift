/// How the result is encoded.
public struct VipsEncoding: Sendable, Equatable {
    public var format: VipsOutputFormat
    /// Encoder quality 1...100 (ignored by PNG).
    public var quality: Int
    /// When set, an image without alpha, or whose alpha is opaque everywhere, is encoded in this
    /// format instead (a GIF always loads with an alpha band, used or not).
    public var opaqueFormat: VipsOutputFormat?

    public init(format: VipsOutputFormat, quality: Int = 80, opaqueFormat: VipsOutputFormat? = nil) {
        self.format = format
        self.quality = quality
        self.opaqueFormat = opaqueFormat
    }
}

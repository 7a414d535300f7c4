/// How the result is encoded.
public struct VipsEncoding: Sendable, Equatable {
    public var format: VipsOutputFormat
    /// Encoder quality 1...100 (ignored by PNG and GIF).
    public var quality: Int
    /// When set, an image without alpha, or whose alpha is opaque everywhere, is encoded in this
    /// format instead (a GIF always loads with an alpha band, used or not). For a kept animation
    /// only when this format can animate too (GIF, WebP): otherwise the animation stays in `format`.
    public var opaqueFormat: VipsOutputFormat?
    /// Keep every frame of an animated source: when the input is encoded bytes of an animated GIF
    /// or WebP (more than one page) and `format` is `.gif` or `.webp`, the output is an animation
    /// of all its frames, each cut to the same size, with the source's frame delays and loop count.
    /// Otherwise (a still source, a decoded copy, another format) the first frame, as without it.
    public var keepsAnimation: Bool

    public init(
        format: VipsOutputFormat, quality: Int = 80, opaqueFormat: VipsOutputFormat? = nil,
        keepsAnimation: Bool = false
    ) {
        self.format = format
        self.quality = quality
        self.opaqueFormat = opaqueFormat
        self.keepsAnimation = keepsAnimation
    }
}

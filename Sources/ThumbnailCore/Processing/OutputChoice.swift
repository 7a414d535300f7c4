/// How a thumbnail is encoded.
public struct OutputChoice: Sendable, Equatable {
    public var format: OutputFormat
    public var quality: Int
    /// When set, an image with no transparent pixel is encoded in this format instead.
    public var opaqueFormat: OutputFormat?
    /// Every frame of an animated source is kept (`format` can animate); otherwise the first.
    public var keepsAnimation: Bool

    public init(format: OutputFormat, quality: Int, opaqueFormat: OutputFormat? = nil, keepsAnimation: Bool = false) {
        self.format = format
        self.quality = quality
        self.opaqueFormat = opaqueFormat
        self.keepsAnimation = keepsAnimation
    }
}
